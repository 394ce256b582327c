import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS } from './errors.js';
import { createLogin, type Login } from './login.js';
import {
  approvedCallback,
  loginOptions,
  loginRequest,
  REDIRECT_URI,
  refusal,
  startProviderAndLogin,
} from './testing/flow.js';
import { TEST_ADDRESS, type TestProvider } from './testing/provider.js';

// The Login object's smaller methods, as an adapter or an app calls them.

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

describe('createLogin', () => {
  it('fails with jwks_unavailable (503) when the login JWKS cannot be fetched at start-up', async () => {
    const noKeys: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (url.endsWith('/.well-known/jwks.json')) return new Response('down', { status: 503 });
      return fetch(input, init);
    };
    const error = await refusal(createLogin(loginOptions(provider, { fetch: noKeys })));
    expect(error).toMatchObject({
      code: 'jwks_unavailable',
      status: 503,
      message: LOGIN_ERRORS.jwks_unavailable.message,
      detail: expect.stringMatching(/JWKS could not be fetched at start-up/),
    });
  });
});

describe('timeoutSeconds', () => {
  it('bounds a token request the login server does not answer: refused after about that long', async () => {
    let hang = false;
    const hanging: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (!hang || !url.endsWith('/oauth2/token')) return fetch(input, init);
      // A login server that accepts the connection and never answers: only the request's signal ends the wait.
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
      });
    };
    const impatient = await createLogin(loginOptions(provider, { fetch: hanging, timeoutSeconds: 1 }));
    const { callback } = await approvedCallback(impatient);
    hang = true;
    const startedAt = Date.now();
    const error = await refusal(impatient.finish(callback));
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(error).toMatchObject({ code: 'login_server_unavailable', status: 503 });
  }, 15_000);
});

describe('jwksCooldownMs', () => {
  it('lets a token of an unknown key refetch the JWKS once that long has passed since the last fetch', async () => {
    let jwksFetches = 0;
    const counting: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (url.endsWith('/.well-known/jwks.json')) jwksFetches++;
      return fetch(input, init);
    };
    const quick = await createLogin(loginOptions(provider, { fetch: counting, jwksCooldownMs: 1 }));
    expect(jwksFetches).toBe(1); // at start-up
    const { privateKey } = await generateKeyPair('RS256');
    const unknownKey = await new SignJWT({ sub: `svcid:${TEST_ADDRESS}` })
      .setProtectedHeader({ alg: 'RS256', kid: 'a-rotated-key', typ: 'at+jwt' })
      .setIssuer(provider.issuer)
      .setAudience(provider.audiences[0]!)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await refusal(quick.verifyAccessToken(unknownKey))).code).toBe('token_invalid');
    expect(jwksFetches).toBe(2);
  });
});

describe('the Login object', () => {
  it('answers the redirect URI of a request', () => {
    expect(login.redirectUriFor(loginRequest('/auth/login'))).toBe(REDIRECT_URI);
    expect(login.callbackPath).toBe('/auth/callback');
  });

  it('clears the transaction cookie of the callback’s state, on the callback path', async () => {
    const start = await login.start(loginRequest('/auth/login'));
    const name = start.setCookie[0]!.split('=')[0]!;
    const state = start.url.searchParams.get('state')!;
    const line = login.clearTransactionCookie(loginRequest(`/auth/callback?state=${state}&code=x`, start.setCookie));
    expect(line).toMatch(new RegExp(`^${name}=; Path=/auth/callback; Max-Age=0(;|$)`));
  });

  it('verifies an ID token, with or without the nonce of its login', async () => {
    const { callback, authorizationUrl } = await approvedCallback(login);
    const { tokens } = await login.finish(callback);
    expect((await login.verifyIdToken(tokens.idToken)).userId).toBe(TEST_ADDRESS);
    const nonce = authorizationUrl.searchParams.get('nonce')!;
    expect((await login.verifyIdToken(tokens.idToken, { nonce })).userId).toBe(TEST_ADDRESS);
    expect((await refusal(login.verifyIdToken(tokens.idToken, { nonce: `${nonce}x` }))).code).toBe('token_invalid');
  });
});
