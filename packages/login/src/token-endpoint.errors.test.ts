import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS } from './errors.js';
import { createLogin } from './login.js';
import { approvedCallback, loginOptions, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';
import { claimsOf, craftToken, tamperingFetch, type Forgery } from './testing/tokens.js';

// How each way the token endpoint (or its answer) fails reaches the app: the code and message a user sees, and the
// detail an operator reads in the log.

let provider: TestProvider;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
});
afterAll(() => provider?.stop());

/** A fetch that answers the token endpoint with `answer` and passes everything else to the provider. */
function tokenEndpointAnswers(answer: () => Response | Promise<Response>): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return url.endsWith('/oauth2/token') ? answer() : fetch(input, init);
  };
}

/** The refusal of a sign-in whose token endpoint is reached with `fetch`. */
async function signInWith(
  fetch: typeof globalThis.fetch,
): Promise<{ code: string; status?: number; message: string; detail?: string }> {
  const login = await createLogin(loginOptions(provider, { fetch }));
  return refusal(login.finish((await approvedCallback(login)).callback));
}

const challenge = (value: string) => () => new Response(null, { status: 400, headers: { 'www-authenticate': value } });

describe('a refusal by the token endpoint', () => {
  it('of the grant: code_exchange_failed (400, start again), naming the OAuth error and status', async () => {
    expect(
      await signInWith(tokenEndpointAnswers(() => Response.json({ error: 'invalid_grant' }, { status: 400 }))),
    ).toMatchObject({
      code: 'code_exchange_failed',
      status: 400,
      message: LOGIN_ERRORS.code_exchange_failed.message,
      detail: 'the token endpoint answered invalid_grant (400)',
    });
  });

  it('names an OAuth error that is not a plain word as "an error" in the detail', async () => {
    for (const error of ['bad!grant', 'x'.repeat(65)]) {
      expect(await signInWith(tokenEndpointAnswers(() => Response.json({ error }, { status: 400 })))).toMatchObject({
        code: 'code_exchange_failed',
        detail: 'the token endpoint answered an error (400)',
      });
    }
  });

  it('with 401, whatever its OAuth error: client_auth_failed (the credentials were refused)', async () => {
    const error = await signInWith(
      tokenEndpointAnswers(() => Response.json({ error: 'invalid_grant' }, { status: 401 })),
    );
    expect(error).toMatchObject({ code: 'client_auth_failed', status: 500 });
    expect(error.detail).toMatch(/client credentials at the token endpoint: invalid_grant \(401\)\./);
  });

  it('with a 400 challenge naming invalid_client, after a challenge naming no error: client_auth_failed', async () => {
    const error = await signInWith(
      tokenEndpointAnswers(challenge('Basic realm="login", Bearer error="invalid_client"')),
    );
    expect(error).toMatchObject({ code: 'client_auth_failed', status: 500 });
    expect(error.detail).toMatch(/client credentials at the token endpoint: invalid_client \(400\)\./);
  });

  it('with a 400 challenge naming another error: code_exchange_failed, not client_auth_failed', async () => {
    expect(await signInWith(tokenEndpointAnswers(challenge('Bearer error="invalid_grant"')))).toMatchObject({
      code: 'code_exchange_failed',
      status: 400,
      detail: 'token endpoint: OAUTH_WWW_AUTHENTICATE_CHALLENGE',
    });
  });

  it('with a challenge naming unauthorized_client (after one naming no error): the grant is not allowed', async () => {
    const error = await signInWith(
      tokenEndpointAnswers(challenge('Basic realm="login", Bearer error="unauthorized_client"')),
    );
    expect(error).toMatchObject({ code: 'client_auth_failed', status: 500 });
    expect(error.detail).toMatch(/does not allow this app's client the authorization_code grant/);
  });

  it('of a public client tells which settings to check', async () => {
    const login = await createLogin(loginOptions(provider, { clientSecret: undefined }));
    const error = await refusal(login.finish((await approvedCallback(login)).callback));
    expect(error.code).toBe('client_auth_failed');
    expect(error.detail).toMatch(
      /otherwise set clientSecret \(KYB_CLIENT_SECRET\), and check clientId \(KYB_CLIENT_ID\)$/,
    );
  });
});

describe('a token endpoint that cannot be used: login_server_unavailable (503, retry later)', () => {
  it.each<[string, () => Response | Promise<Response>, string]>([
    ['a 500 with a text body', () => new Response('oops', { status: 500 }), 'OAUTH_RESPONSE_IS_NOT_CONFORM'],
    [
      'a 500 with a JSON body that is no OAuth error',
      () => Response.json({}, { status: 500 }),
      'OAUTH_RESPONSE_IS_NOT_CONFORM',
    ],
    [
      'a 200 that is not JSON',
      () => new Response('<html>', { status: 200, headers: { 'content-type': 'text/html' } }),
      'OAUTH_RESPONSE_IS_NOT_JSON',
    ],
    [
      'a 200 of JSON type whose body is not JSON',
      () => new Response('{"access_token":', { status: 200, headers: { 'content-type': 'application/json' } }),
      'OAUTH_PARSE_ERROR',
    ],
    ['a failed request', () => Promise.reject(new TypeError('fetch failed')), 'TypeError'],
    ['a timeout', () => Promise.reject(new DOMException('timed out', 'TimeoutError')), 'OAUTH_TIMEOUT'],
    ['an aborted request', () => Promise.reject(new DOMException('aborted', 'AbortError')), 'OAUTH_ABORT'],
    [
      'a fetch that throws something other than a TypeError',
      () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { name: 'ConnectError' })),
      'ConnectError',
    ],
  ])('for %s', async (_name, answer, named) => {
    expect(await signInWith(tokenEndpointAnswers(answer))).toMatchObject({
      code: 'login_server_unavailable',
      status: 503,
      message: LOGIN_ERRORS.login_server_unavailable.message,
      detail: `token endpoint: ${named}`,
    });
  });
});

describe('a token response that is not acceptable', () => {
  it('of type DPoP, not bearer: token_invalid', async () => {
    expect(await signInWith(tamperingFetch((body) => ({ ...body, token_type: 'DPoP' })))).toMatchObject({
      code: 'token_invalid',
      status: 401,
      detail: 'token_type is not bearer',
    });
  });

  it('without an ID token: token_invalid naming it', async () => {
    expect(await signInWith(tamperingFetch(({ id_token: _idToken, ...body }) => body))).toMatchObject({
      code: 'token_invalid',
      detail: 'response: "response" body "id_token" property must be a string',
    });
  });

  const resigned = (change: Record<string, unknown>) =>
    tamperingFetch(async (body) => ({
      ...body,
      id_token: await craftToken(provider.signingKey, { ...claimsOf(body.id_token), ...change }),
    }));

  it('with an ID token for another audience: token_invalid with the generic message, the claim in the detail', async () => {
    expect(await signInWith(resigned({ aud: 'another-client' }))).toMatchObject({
      code: 'token_invalid',
      message: LOGIN_ERRORS.token_invalid.message,
      detail: 'response: unexpected JWT "aud" (audience) claim value',
    });
  });

  it('with an ID token of another issuer: token_invalid about the ID token, the claim in the detail', async () => {
    expect(await signInWith(resigned({ iss: 'https://login.other.test' }))).toMatchObject({
      code: 'token_invalid',
      message: 'The ID token was not issued by this site\u2019s login server (its iss is another issuer).',
      detail: 'id_token: unexpected JWT "iss" (issuer) claim value',
    });
  });

  it.each<[string, string, string]>([
    ['not a JWT', 'not-a-jwt', 'Invalid JWT'],
    ['a JWT whose header is not JSON', 'Zm9v.e30.c2ln', 'failed to parse JWT Header body as base64url encoded JSON'],
    [
      'encrypted (a JWE, which this client does not decrypt)',
      'eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.a.b.c.d',
      'JWE decryption is not configured',
    ],
  ])('with an ID token that is %s: token_invalid', async (_name, idToken, detail) => {
    const error = await signInWith(tamperingFetch((body) => ({ ...body, id_token: idToken })));
    expect(error).toMatchObject({ code: 'token_invalid', status: 401, message: LOGIN_ERRORS.token_invalid.message });
    expect(error.detail).toBe(`response: ${detail}`);
  });

  it.each<[string, Forgery]>([
    ['alg none', 'none'],
    ["HS256 with the login server's public key as the secret", 'hs256-public-key'],
  ])('with an ID token of %s: token_invalid naming the alg check', async (_name, forgery) => {
    const error = await signInWith(
      tamperingFetch(async (body) => ({
        ...body,
        id_token: await craftToken(provider.signingKey, claimsOf(body.id_token), forgery),
      })),
    );
    expect(error).toMatchObject({ code: 'token_invalid', detail: 'response: unexpected JWT "alg" header parameter' });
  });

  it('with an expired ID token: token_expired, the claim in the detail', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await signInWith(resigned({ iat: now - 3600, exp: now - 600 }))).toMatchObject({
      code: 'token_expired',
      status: 401,
      detail: 'id_token: unexpected JWT "exp" (expiration time) claim value, expiration is past current timestamp',
    });
  });

  it('with an ID token not valid yet (nbf ahead): token_invalid, not token_expired', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await signInWith(resigned({ nbf: now + 600 }))).toMatchObject({
      code: 'token_invalid',
      status: 401,
      detail: 'id_token: unexpected JWT "nbf" (not before) claim value',
    });
  });
});
