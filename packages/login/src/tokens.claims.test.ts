import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOGIN_ERRORS } from './errors.js';
import { TokenVerifier } from './tokens.js';
import { refusal } from './testing/flow.js';

// The claim checks of TokenVerifier, each refusal with the code a caller sees and the detail an operator reads.

const ISSUER = 'https://login.service.test';
const AUDIENCE = 'https://api.merchant.test';
const CLIENT_ID = 'merchant';
const TOLERANCE = 30;

let jwksUrl: string;
let jwksServer: Server;
let publicJwk: JWK;
let privateKey: CryptoKey;
let otherKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  otherKey = (await generateKeyPair('RS256')).privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(async () => {
  jwksServer.closeAllConnections();
  await new Promise((resolve) => jwksServer.close(resolve));
});
afterEach(() => void vi.restoreAllMocks());

function verifier(fetch?: typeof globalThis.fetch, jwksUri = jwksUrl): TokenVerifier {
  return new TokenVerifier({
    issuer: ISSUER,
    jwksUri,
    clientId: CLIENT_ID,
    audience: AUDIENCE,
    algorithm: 'RS256',
    clockToleranceSeconds: TOLERANCE,
    jwksCooldownMs: 0,
    fetch,
  });
}

const now = (): number => Math.floor(Date.now() / 1000);

/** A token signed by the login key (or `key`), with the usual claims unless `claims` overrides them. */
function sign(
  claims: JWTPayload,
  header: Record<string, unknown> = { typ: 'JWT' },
  key: CryptoKey = privateKey,
): Promise<string> {
  return new SignJWT({ iss: ISSUER, sub: 'svcid:0xabc', aud: CLIENT_ID, iat: now(), exp: now() + 300, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', ...header })
    .sign(key);
}
const accessToken = (claims: JWTPayload = {}, header: Record<string, unknown> = { typ: 'at+jwt' }): Promise<string> =>
  sign({ aud: AUDIENCE, ...claims }, header);

describe('an ID token', () => {
  it('is accepted with the nonce of the login transaction (control)', async () => {
    const { userId, claims } = await verifier().verifyIdToken(await sign({ nonce: 'n-1' }), 'n-1');
    expect(userId).toBe('0xabc');
    expect(claims.nonce).toBe('n-1');
  });

  it('is refused with another nonce', async () => {
    const error = await refusal(verifier().verifyIdToken(await sign({ nonce: 'n-2' }), 'n-1'));
    expect(error).toMatchObject({
      code: 'token_invalid',
      status: 401,
      message: LOGIN_ERRORS.token_invalid.message,
      detail: 'id_token nonce does not match the login transaction',
    });
  });

  it('is refused with several audiences when azp is not this client (OIDC Core 3.1.3.7)', async () => {
    for (const azp of [undefined, 'another-client']) {
      const token = await sign({ aud: [CLIENT_ID, 'another-client'], ...(azp ? { azp } : {}) });
      expect(await refusal(verifier().verifyIdToken(token))).toMatchObject({
        code: 'token_invalid',
        detail: 'id_token azp is not this client',
      });
    }
  });

  it('is refused with one audience and an azp that is another client (OIDC Core 3.1.3.7, point 5)', async () => {
    for (const aud of [CLIENT_ID, [CLIENT_ID]]) {
      expect(await refusal(verifier().verifyIdToken(await sign({ aud, azp: 'another-client' })))).toMatchObject({
        code: 'token_invalid',
        detail: 'id_token azp is not this client',
      });
    }
    expect((await verifier().verifyIdToken(await sign({ aud: CLIENT_ID, azp: CLIENT_ID }))).userId).toBe('0xabc');
  });

  it('is accepted with several audiences when azp is this client, or with one audience and no azp', async () => {
    const several = await sign({ aud: [CLIENT_ID, 'another-client'], azp: CLIENT_ID });
    expect((await verifier().verifyIdToken(several)).userId).toBe('0xabc');
    expect((await verifier().verifyIdToken(await sign({ aud: [CLIENT_ID] }))).userId).toBe('0xabc');
  });

  it('is refused with typ at+jwt (an access token offered as an ID token)', async () => {
    const error = await refusal(verifier().verifyIdToken(await sign({}, { typ: 'at+jwt' })));
    expect(error).toMatchObject({ code: 'token_invalid', detail: 'id_token has typ "at+jwt"' });
  });

  it('from another issuer is refused about the ID token, with the check in the detail', async () => {
    const error = await refusal(verifier().verifyIdToken(await sign({ iss: 'https://login.other.test' })));
    expect(error).toMatchObject({
      code: 'token_invalid',
      status: 401,
      message: 'The ID token was not issued by this site\u2019s login server (its iss is another issuer).',
      detail: 'id_token claim iss failed: check_failed',
    });
  });
});

describe('an access token', () => {
  it.each(['at+jwt', 'application/at+jwt', 'JWT', 'jwt'])('is accepted with typ %s (control)', async (typ) => {
    expect((await verifier().verifyAccessToken(await accessToken({}, { typ }))).userId).toBe('0xabc');
  });

  it('is accepted without typ, and with several audiences and no azp (azp is an ID token check)', async () => {
    expect((await verifier().verifyAccessToken(await accessToken({}, {}))).userId).toBe('0xabc');
    const several = await accessToken({ aud: [AUDIENCE, 'https://other.api.test'] });
    expect((await verifier().verifyAccessToken(several)).userId).toBe('0xabc');
  });

  it('is refused with another typ, the detail quoting it (cut to 40 characters)', async () => {
    const error = await refusal(verifier().verifyAccessToken(await accessToken({}, { typ: 'kyb-attestation+jwt' })));
    expect(error).toMatchObject({ code: 'token_invalid', detail: 'access_token has typ "kyb-attestation+jwt"' });
    const long = `${'x'.repeat(50)}+jwt`;
    expect(await refusal(verifier().verifyAccessToken(await accessToken({}, { typ: long })))).toMatchObject({
      code: 'token_invalid',
      detail: `access_token has typ "${'x'.repeat(40)}"`,
    });
  });

  it('is refused with a typ that is not a string, the detail naming its type', async () => {
    const error = await refusal(verifier().verifyAccessToken(await accessToken({}, { typ: 7 })));
    expect(error).toMatchObject({ code: 'token_invalid', detail: 'access_token has typ number' });
  });

  it('is refused when missing, or when not a JWS', async () => {
    expect(await refusal(verifier().verifyAccessToken(''))).toMatchObject({
      code: 'token_missing',
      status: 401,
      detail: 'access_token is missing',
    });
    expect(await refusal(verifier().verifyAccessToken('not.a-jws'))).toMatchObject({
      code: 'token_invalid',
      detail: 'access_token is not a JWS',
    });
  });

  it('is refused when expired beyond the leeway', async () => {
    const error = await refusal(verifier().verifyAccessToken(await accessToken({ iat: now() - 600, exp: now() - 60 })));
    expect(error).toMatchObject({ code: 'token_expired', status: 401, detail: 'access_token exp is past' });
  });

  it('is refused for another audience, the detail naming the claim', async () => {
    const error = await refusal(verifier().verifyAccessToken(await accessToken({ aud: 'https://other.api.test' })));
    expect(error).toMatchObject({
      code: 'token_invalid',
      message: LOGIN_ERRORS.token_invalid.message,
      detail: 'access_token claim aud failed: check_failed',
    });
  });

  it('from another issuer is refused about the access token', async () => {
    const error = await refusal(verifier().verifyAccessToken(await accessToken({ iss: `${ISSUER}/` })));
    expect(error).toMatchObject({
      code: 'token_invalid',
      message: 'The access token was not issued by this site\u2019s login server (its iss is another issuer).',
      detail: 'access_token claim iss failed: check_failed',
    });
  });

  it('is refused when signed by another key, with jose’s code in the detail', async () => {
    const token = await sign({ aud: AUDIENCE }, { typ: 'at+jwt' }, otherKey);
    expect(await refusal(verifier().verifyAccessToken(token))).toMatchObject({
      code: 'token_invalid',
      detail: 'access_token: ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
  });

  it('is refused with a sub that lacks the svcid: prefix', async () => {
    for (const sub of ['0xabc', 'did:pkh:0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c']) {
      const error = await refusal(verifier().verifyAccessToken(await accessToken({ sub })));
      expect(error).toMatchObject({
        code: 'subject_invalid',
        status: 401,
        detail: 'access_token sub lacks the svcid: prefix',
      });
    }
  });

  it('is refused when issued in the future beyond the leeway, and accepted exactly at the leeway', async () => {
    const fixed = 1_900_000_000_000;
    vi.spyOn(Date, 'now').mockReturnValue(fixed);
    const t = fixed / 1000;
    const atLeeway = await accessToken({ iat: t + TOLERANCE, exp: t + 600 });
    expect((await verifier().verifyAccessToken(atLeeway)).userId).toBe('0xabc');
    const beyond = await accessToken({ iat: t + TOLERANCE + 1, exp: t + 600 });
    expect(await refusal(verifier().verifyAccessToken(beyond))).toMatchObject({
      code: 'token_invalid',
      detail: 'access_token iat is in the future',
    });
  });
});

describe('the login JWKS, when it cannot be had', () => {
  /** The refusal of a genuine access token when the JWKS is fetched with `fetch`. */
  async function refusedWith(fetch: typeof globalThis.fetch): Promise<{ code: string; detail?: string }> {
    return refusal(verifier(fetch).verifyAccessToken(await accessToken()));
  }

  it('answers jwks_unavailable naming the HTTP status of an error answer, with or without a body', async () => {
    for (const body of [null, '{"error":"down"}', 'upstream down']) {
      expect(await refusedWith(async () => new Response(body, { status: 503 }))).toMatchObject({
        code: 'jwks_unavailable',
        status: 503,
        message: LOGIN_ERRORS.jwks_unavailable.message,
        detail: 'access_token: the login JWKS answered HTTP 503',
      });
    }
  });

  it('answers jwks_unavailable when the JWKS is not JSON', async () => {
    expect(await refusedWith(async () => new Response('<html>', { status: 200 }))).toMatchObject({
      code: 'jwks_unavailable',
      detail: 'access_token: the login JWKS is not JSON',
    });
  });

  it('answers jwks_unavailable when the JSON is not a key set', async () => {
    expect(await refusedWith(async () => Response.json({ keys: 'none' }))).toMatchObject({
      code: 'jwks_unavailable',
      detail: 'access_token: the login JWKS is not a key set',
    });
  });

  it('answers jwks_unavailable naming the failure of the request by its class name only', async () => {
    const failing =
      (error: unknown): typeof fetch =>
      () =>
        Promise.reject(error);
    expect(await refusedWith(failing(new TypeError('fetch failed')))).toMatchObject({
      code: 'jwks_unavailable',
      detail: 'access_token: fetching the login JWKS failed (TypeError)',
    });
    const oddName = Object.assign(new Error('x'), { name: 'Bad Name' });
    expect(await refusedWith(failing(oddName))).toMatchObject({
      code: 'jwks_unavailable',
      detail: 'access_token: fetching the login JWKS failed (error)',
    });
    const numbered = Object.assign(new Error('x'), { name: 42 });
    expect(await refusedWith(failing(numbered))).toMatchObject({
      detail: 'access_token: fetching the login JWKS failed (error)',
    });
    expect(await refusedWith(failing(undefined))).toMatchObject({
      code: 'jwks_unavailable',
      detail: 'access_token: fetching the login JWKS failed (error)',
    });
  });

  it('answers internal_error (500), not a token refusal, when verification fails unexpectedly', async () => {
    // A fetch answering something that is not a Response: the failure is neither jose's nor the JWKS request's.
    const odd = (async () => ({ status: 200, text: async () => '{"keys":[]}', headers: 5 })) as unknown as typeof fetch;
    const error = await refusedWith(odd);
    expect(error).toMatchObject({
      code: 'internal_error',
      status: 500,
      message: LOGIN_ERRORS.internal_error.message,
      detail: 'access_token: verification failed unexpectedly (TypeError)',
    });
  });
});
