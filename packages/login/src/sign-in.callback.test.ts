import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KybLoginError, LOGIN_ERRORS } from './errors.js';
import { createLogin, type Login } from './login.js';
import {
  approvedCallback,
  browserCode,
  loginOptions,
  loginRequest,
  REDIRECT_URI,
  refusal,
  startProviderAndLogin,
} from './testing/flow.js';
import { TEST_ADDRESS, type TestProvider } from './testing/provider.js';
import { tamperingFetch } from './testing/tokens.js';

// What the callback route and the backend code exchange tell a user (code, status, message) and the logs (detail)
// for each malformed or refused answer of the login server.

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

/** A started login's state and Set-Cookie lines, and a callback for it with the query `edit` leaves. */
async function callbackWith(edit: (query: URLSearchParams) => void, target: Login = login) {
  const start = await target.start(loginRequest('/auth/login'));
  const state = start.url.searchParams.get('state')!;
  const query = new URLSearchParams({ state, code: 'a-code', iss: provider.issuer });
  edit(query);
  return loginRequest(`/auth/callback?${query}`, start.setCookie);
}

describe('the callback is refused before any code exchange', () => {
  it('without a state: state_mismatch, with the message a user sees', async () => {
    const error = await refusal(login.finish(await callbackWith((q) => q.delete('state'))));
    expect(error).toMatchObject({
      code: 'state_mismatch',
      status: 400,
      message: LOGIN_ERRORS.state_mismatch.message,
      detail: 'the callback has no state',
    });
  });

  it('with two states, even when the first is the login’s own: state_mismatch', async () => {
    const error = await refusal(login.finish(await callbackWith((q) => q.append('state', 'another'))));
    expect(error).toMatchObject({ code: 'state_mismatch', status: 400, detail: 'the callback has several states' });
  });

  it('when the login server answered an error: authorization_denied naming it', async () => {
    const error = await refusal(
      login.finish(
        await callbackWith((q) => {
          q.delete('code');
          q.set('error', 'access_denied');
        }),
      ),
    );
    expect(error).toMatchObject({
      code: 'authorization_denied',
      status: 400,
      message: LOGIN_ERRORS.authorization_denied.message,
    });
    expect(error.detail).toMatch(/the login server answered .*access_denied/);
  });

  it('when an error answer names another iss: callback_invalid about the iss, not authorization_denied', async () => {
    const error = await refusal(
      login.finish(
        await callbackWith((q) => {
          q.delete('code');
          q.set('error', 'access_denied');
          q.set('iss', 'https://evil.example');
        }),
      ),
    );
    expect(error).toMatchObject({ code: 'callback_invalid', detail: expect.stringMatching(/iss \(RFC 9207\)/) });
  });

  it('when an error answer lacks the iss the login server announces it always sends: callback_invalid', async () => {
    const error = await refusal(
      login.finish(
        await callbackWith((q) => {
          q.delete('code');
          q.delete('iss');
          q.set('error', 'access_denied');
        }),
      ),
    );
    expect(error).toMatchObject({ code: 'callback_invalid', detail: expect.stringMatching(/has no iss/) });
  });

  it('without a code, and with two codes: callback_invalid saying which', async () => {
    const none = await refusal(login.finish(await callbackWith((q) => q.delete('code'))));
    expect(none).toMatchObject({ code: 'callback_invalid', status: 400, detail: 'the callback has no code' });
    const empty = await refusal(login.finish(await callbackWith((q) => q.set('code', ''))));
    expect(empty).toMatchObject({ code: 'callback_invalid', detail: 'the callback has no code' });
    const two = await refusal(login.finish(await callbackWith((q) => q.append('code', 'another'))));
    expect(two).toMatchObject({
      code: 'callback_invalid',
      status: 400,
      message: LOGIN_ERRORS.callback_invalid.message,
      detail: 'the callback has several codes',
    });
  });

  it('with two iss parameters, even when the first is the issuer: callback_invalid', async () => {
    const error = await refusal(login.finish(await callbackWith((q) => q.append('iss', provider.issuer))));
    expect(error).toMatchObject({
      code: 'callback_invalid',
      status: 400,
      detail: expect.stringMatching(/several iss/),
    });
  });

  it('with another iss: callback_invalid about the iss', async () => {
    const error = await refusal(login.finish(await callbackWith((q) => q.set('iss', `${provider.issuer}/`))));
    expect(error).toMatchObject({ code: 'callback_invalid', detail: expect.stringMatching(/iss \(RFC 9207\)/) });
  });

  it('without iss, which the login server announces it always sends: callback_invalid about the missing iss', async () => {
    const error = await refusal(login.finish(await callbackWith((q) => q.delete('iss'))));
    expect(error).toMatchObject({ code: 'callback_invalid', detail: expect.stringMatching(/has no iss/) });
  });
});

describe('a login server that does not announce RFC 9207 iss', () => {
  /** The provider's fetch, with the discovery document saying the login server does not send iss. */
  const withoutIssSupport: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/.well-known/openid-configuration')) return response;
    const document = (await response.json()) as Record<string, unknown>;
    return Response.json({ ...document, authorization_response_iss_parameter_supported: false });
  };

  it('signs in from a callback without iss', async () => {
    const quiet = await createLogin(loginOptions(provider, { fetch: withoutIssSupport }));
    const { callbackUrl, setCookie } = await approvedCallback(quiet);
    callbackUrl.searchParams.delete('iss');
    expect((await quiet.finish(loginRequest(callbackUrl, setCookie))).userId).toBe(TEST_ADDRESS);
  });

  it('still refuses a callback naming another iss', async () => {
    const quiet = await createLogin(loginOptions(provider, { fetch: withoutIssSupport }));
    const error = await refusal(quiet.finish(await callbackWith((q) => q.set('iss', 'https://evil.example'), quiet)));
    expect(error).toMatchObject({ code: 'callback_invalid', detail: expect.stringMatching(/iss \(RFC 9207\)/) });
  });
});

describe('the start is refused', () => {
  it('for a return path on another site: return_path_invalid with its message', async () => {
    const error = await refusal(login.start(loginRequest('/auth/login'), { returnTo: '//evil.example/' }));
    expect(error).toMatchObject({
      code: 'return_path_invalid',
      status: 400,
      message: LOGIN_ERRORS.return_path_invalid.message,
      detail: expect.stringMatching(/same-origin path/),
    });
  });
});

describe('the sign-in after the code exchange', () => {
  it('without a return path: the sign-in returns to the site’s root', async () => {
    expect((await login.finish((await approvedCallback(login)).callback)).returnTo).toBe('/');
  });
  it('is refused when the token response has no ID token: token_invalid', async () => {
    const noIdToken = await createLogin(
      loginOptions(provider, {
        fetch: tamperingFetch(({ id_token: _dropped, ...rest }) => rest),
      }),
    );
    const error = await refusal(noIdToken.finish((await approvedCallback(noIdToken)).callback));
    // openid-client already refuses an answer to an `openid` scope without one (the same code and status).
    expect(error).toMatchObject({ code: 'token_invalid', status: 401, message: LOGIN_ERRORS.token_invalid.message });
  });

  it('answers user_store_failed (500) when upsertUser throws, with the store’s error as the cause', async () => {
    const failure = new Error('database down');
    const failing = await createLogin(
      loginOptions(provider, {
        upsertUser: async () => {
          throw failure;
        },
      }),
    );
    const error = (await refusal(failing.finish((await approvedCallback(failing)).callback))) as KybLoginError;
    expect(error).toBeInstanceOf(KybLoginError);
    expect(error).toMatchObject({
      name: 'KybLoginError',
      code: 'user_store_failed',
      status: 500,
      message: LOGIN_ERRORS.user_store_failed.message,
      detail: 'upsertUser threw',
    });
    expect(error.cause).toBe(failure);
  });
});

describe('exchangeCode (the backend exchange)', () => {
  it.each<[string, unknown]>([
    ['no input', undefined],
    ['no code', { codeVerifier: 'v'.repeat(43) }],
    ['an empty code', { code: '', codeVerifier: 'v'.repeat(43) }],
    ['no verifier', { code: 'a-code' }],
    ['an empty verifier', { code: 'a-code', codeVerifier: '' }],
  ])('refuses %s: code_exchange_failed, without asking the login server', async (_name, input) => {
    const before = provider.lastTokenRequest;
    const error = await refusal(login.exchangeCode(input as { code: string; codeVerifier: string }));
    expect(error).toMatchObject({
      code: 'code_exchange_failed',
      status: 400,
      detail: 'exchangeCode needs a code and a codeVerifier',
    });
    expect(provider.lastTokenRequest).toBe(before);
  });

  it.each(['not a URL', '/auth/callback', 'ftp://shop.example/auth/callback'])(
    'refuses the redirectUri %j: code_exchange_failed, without asking the login server',
    async (redirectUri) => {
      const before = provider.lastTokenRequest;
      const error = await refusal(login.exchangeCode({ code: 'a-code', codeVerifier: 'v'.repeat(43), redirectUri }));
      expect(error).toMatchObject({
        code: 'code_exchange_failed',
        status: 400,
        detail: 'exchangeCode needs an absolute http(s) redirectUri',
      });
      expect(provider.lastTokenRequest).toBe(before);
    },
  );

  it('refuses a redirectUri with a query: config_invalid saying why, without asking the login server', async () => {
    const before = provider.lastTokenRequest;
    const redirectUri = `${REDIRECT_URI}?tenant=a`;
    const error = await refusal(login.exchangeCode({ code: 'a-code', codeVerifier: 'v'.repeat(43), redirectUri }));
    expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
    expect(error.message).toMatch(/^exchangeCode's redirectUri must not have a \?query: the token request must repeat/);
    expect(error.message).toMatch(/openid-client\) drops the query/);
    expect(error.message).not.toContain('tenant');
    expect(provider.lastTokenRequest).toBe(before);
  });

  it('refuses an ID token without the nonce the browser says its login sent: token_invalid', async () => {
    const { code, codeVerifier } = await browserCode(provider);
    const error = await refusal(login.exchangeCode({ code, codeVerifier, nonce: 'a-nonce-of-the-browser' }));
    expect(error).toMatchObject({ code: 'token_invalid', status: 401 });
    expect(error.detail).toMatch(/nonce/);
  });

  it('needs the absolute redirect URI when the configured one is a path: config_invalid, then signs in with it', async () => {
    const pathConfigured = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
    const { code, codeVerifier } = await browserCode(provider);
    const error = await refusal(pathConfigured.exchangeCode({ code, codeVerifier }));
    expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
    expect(error.message).toMatch(/absolute redirectUri the browser used/);
    const result = await pathConfigured.exchangeCode({ code, codeVerifier, redirectUri: REDIRECT_URI });
    expect(result.userId).toBe(TEST_ADDRESS);
  });
});
