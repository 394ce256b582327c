import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogin } from './login.js';
import { LoginRoutes } from './routes.js';
import { MAX_STALE_MS } from './login-jwks.js';
import { TokenVerifier } from './tokens.js';
import { approvedCallback, loginOptions, loginRequest, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider, TEST_ADDRESS } from './testing/provider.js';
import { claimsOf, craftToken, tamperingFetch } from './testing/tokens.js';

const ISSUER = 'https://login.service.test';
const AUDIENCE = 'https://api.merchant.test';

/** A JWKS server whose key set (or error status) the test changes, counting the fetches. */
async function jwksServer(
  status = 200,
): Promise<{ url: string; keys: JWK[]; fetches: () => number; stop(): Promise<void> }> {
  let fetches = 0;
  const keys: JWK[] = [];
  const server: Server = createServer((_req, res) => {
    fetches++;
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(status === 200 ? { keys } : { error: 'upstream down' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    keys,
    fetches: () => fetches,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function keyPair(
  kid: string,
): Promise<{ publicJwk: JWK; sign: (claims?: Record<string, unknown>) => Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  return {
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
    sign: (claims = {}) =>
      new SignJWT({ sub: 'svcid:0xabc', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey),
  };
}

/** The URL a fetch was called with. */
function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (stops.length) await stops.pop()!();
});

function verifier(jwksUri: string, cooldownMs: number, jwksTimeoutMs?: number): TokenVerifier {
  return new TokenVerifier({
    issuer: ISSUER,
    jwksUri,
    clientId: 'merchant',
    audience: AUDIENCE,
    algorithm: 'RS256',
    clockToleranceSeconds: 30,
    jwksCooldownMs: cooldownMs,
    ...(jwksTimeoutMs === undefined ? {} : { jwksTimeoutMs }),
    fetch: undefined,
  });
}

/** An ID token for the client `merchant`, signed by a new key published as `kid` in `keys`. */
async function idTokenOfNewKey(kid: string, keys: JWK[]): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  keys.push({ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' });
  return new SignJWT({ sub: 'svcid:0xabc' })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience('merchant')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
}

describe('the login JWKS', () => {
  it('is refetched when a token names an unknown kid (a key rotation), and the new key is used', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    const old = await keyPair('k1');
    const rotated = await keyPair('k2');
    jwks.keys.push(old.publicJwk);
    const v = verifier(jwks.url, 0);
    await v.jwks.reload();
    expect((await v.verifyAccessToken(await old.sign())).userId).toBe('0xabc');
    expect(jwks.fetches()).toBe(1); // cached
    jwks.keys.push(rotated.publicJwk);
    expect((await v.verifyAccessToken(await rotated.sign())).userId).toBe('0xabc');
    expect(jwks.fetches()).toBe(2);
  });

  it('is refetched within the cooldown for an ID token the token endpoint granted: a rotation, not a forgery', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    jwks.keys.push((await keyPair('k1')).publicJwk);
    const v = verifier(jwks.url, 60_000);
    await v.jwks.reload();
    const idToken = await idTokenOfNewKey('k2', jwks.keys);
    // Handed over by anyone else, the cooldown holds: refused, nothing fetched.
    expect((await refusal(v.verifyIdToken(idToken))).code).toBe('token_invalid');
    expect(jwks.fetches()).toBe(1);
    expect((await v.verifyGrantedIdToken(idToken)).userId).toBe('0xabc');
    expect(jwks.fetches()).toBe(2);
  });

  it('refuses a granted ID token whose kid is still unknown after that one refetch', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    jwks.keys.push((await keyPair('k1')).publicJwk);
    const v = verifier(jwks.url, 60_000);
    await v.jwks.reload();
    const idToken = await idTokenOfNewKey('k3', []); // never published
    expect((await refusal(v.verifyGrantedIdToken(idToken))).code).toBe('token_invalid');
    expect(jwks.fetches()).toBe(2);
  });

  it('answers jwks_unavailable when the refetch for a granted ID token fails', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    jwks.keys.push((await keyPair('k1')).publicJwk);
    const v = verifier(jwks.url, 60_000);
    await v.jwks.reload();
    const idToken = await idTokenOfNewKey('k2', jwks.keys);
    await jwks.stop(); // the login server's JWKS goes away with the rotation
    expect(await refusal(v.verifyGrantedIdToken(idToken))).toMatchObject({ code: 'jwks_unavailable', status: 503 });
  });

  it("is fetched within the login's timeout, not jose's fixed 5 s", async () => {
    const slow = createServer((_req, res) => {
      setTimeout(() => res.end(JSON.stringify({ keys: [] })), 1_000);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    stops.push(() => {
      slow.closeAllConnections();
      return new Promise((resolve) => slow.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/jwks`;
    const started = Date.now();
    await expect(verifier(url, 0, 200).jwks.reload()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('is not refetched again for unknown kids within the cooldown', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    const known = await keyPair('k1');
    jwks.keys.push(known.publicJwk);
    const v = verifier(jwks.url, 60_000);
    await v.jwks.reload();
    for (const kid of ['x1', 'x2', 'x3']) {
      const stranger = await keyPair(kid);
      expect((await refusal(v.verifyAccessToken(await stranger.sign()))).code).toBe('token_invalid');
    }
    expect(jwks.fetches()).toBe(1);
  });

  it('answers jwks_unavailable (503) when the keys cannot be fetched', async () => {
    const jwks = await jwksServer();
    const key = await keyPair('k1');
    await jwks.stop();
    const error = await refusal(verifier(jwks.url, 0).verifyAccessToken(await key.sign()));
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
  });

  it('answers jwks_unavailable (503), not token_invalid, when the JWKS server answers an error status', async () => {
    const jwks = await jwksServer(503);
    stops.push(jwks.stop);
    const key = await keyPair('k1');
    const error = await refusal(verifier(jwks.url, 0).verifyAccessToken(await key.sign()));
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
    expect(jwks.fetches()).toBe(1);
  });

  it('keeps verifying the keys it has through an outage, up to MAX_STALE_MS, asking the address again after each cooldown', async () => {
    const key = await keyPair('k1');
    let later = 0;
    let down = false;
    let fetches = 0;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + later);
    const v = new TokenVerifier({
      issuer: ISSUER,
      jwksUri: 'http://127.0.0.1:9/.well-known/jwks.json',
      clientId: 'merchant',
      audience: AUDIENCE,
      algorithm: 'RS256',
      clockToleranceSeconds: 30,
      jwksCooldownMs: 60_000,
      fetch: async () => {
        fetches++;
        return down ? new Response('upstream down', { status: 503 }) : Response.json({ keys: [key.publicJwk] });
      },
    });
    await v.jwks.reload();
    down = true;
    later = 50 * 60_000; // past jose's cache age: a refresh is due, and fails
    expect((await v.verifyAccessToken(await key.sign())).userId).toBe('0xabc');
    expect(fetches).toBe(2);
    expect((await v.verifyAccessToken(await key.sign())).userId).toBe('0xabc');
    expect(fetches).toBe(2); // within the cooldown of the failed refresh: not asked again
    const stranger = await keyPair('k9');
    expect((await refusal(v.verifyAccessToken(await stranger.sign()))).code).toBe('jwks_unavailable');
    later += 61_000;
    expect((await v.verifyAccessToken(await key.sign())).userId).toBe('0xabc');
    expect(fetches).toBe(3);
    later = MAX_STALE_MS + 1;
    expect(await refusal(v.verifyAccessToken(await key.sign()))).toMatchObject({
      code: 'jwks_unavailable',
      status: 503,
    });
  });

  it('stops trusting a key the login server withdrew once the cache age has passed', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    const withdrawn = await keyPair('k1');
    jwks.keys.push(withdrawn.publicJwk);
    const v = verifier(jwks.url, 0);
    await v.jwks.reload();
    expect((await v.verifyAccessToken(await withdrawn.sign())).userId).toBe('0xabc');
    jwks.keys.length = 0;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 11 * 60_000);
    expect((await refusal(v.verifyAccessToken(await withdrawn.sign()))).code).toBe('token_invalid');
    expect(jwks.fetches()).toBeGreaterThanOrEqual(2);
  });

  it('answers 503 jwks_unavailable on API routes and on the callback when an unknown kid finds the JWKS down', async () => {
    const provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
    stops.push(provider.stop);
    // The provider's key under a kid the login has not seen (a rotation), and the JWKS down once the login started.
    const rotated = { ...provider.signingKey, kid: 'rotated-key' };
    let jwksDown = false;
    const resigned = tamperingFetch(async (body) => ({
      ...body,
      id_token: await craftToken(rotated, claimsOf(body.id_token)),
    }));
    const login = await createLogin(
      loginOptions(provider, {
        jwksCooldownMs: 0,
        fetch: async (input, init) =>
          jwksDown && urlOf(input).endsWith('/.well-known/jwks.json')
            ? new Response('upstream down', { status: 503 })
            : resigned(input, init),
      }),
    );
    const routes = new LoginRoutes(login, { onError: () => {} });
    jwksDown = true;

    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: provider.issuer, sub: `svcid:${TEST_ADDRESS}`, aud: provider.audiences[0], iat: now };
    const accessToken = await craftToken(rotated, { ...claims, exp: now + 300 });
    const api = await routes.user(loginRequest('/api/me', [], { authorization: `Bearer ${accessToken}` }), undefined);
    expect(api).toMatchObject({ status: 503 });
    expect(JSON.parse((api as { body: string }).body)).toMatchObject({ error: 'jwks_unavailable' });

    const callback = await routes.callback((await approvedCallback(login)).callback, undefined);
    expect(callback.status).toBe(503);
    expect(JSON.parse(callback.body!)).toMatchObject({ error: 'jwks_unavailable' });
  });

  it('is fetched once at start-up by createLogin and then served from the cache', async () => {
    const provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
    stops.push(provider.stop);
    const fetched: string[] = [];
    const counting: typeof fetch = (input, init) => {
      fetched.push(new URL(typeof input === 'string' || input instanceof URL ? input : input.url).pathname);
      return fetch(input, init);
    };
    const login = await createLogin(loginOptions(provider, { fetch: counting }));
    expect(fetched.filter((p) => p.endsWith('/jwks.json'))).toHaveLength(1);
    await login.finish((await approvedCallback(login)).callback);
    expect(fetched.filter((p) => p.endsWith('/jwks.json'))).toHaveLength(1);
    expect(fetched[0]).toBe('/.well-known/openid-configuration');
  });
});
