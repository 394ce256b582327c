import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOGIN_ERRORS, type KybLoginError } from './errors.js';
import { createLogin } from './login.js';
import { LoginRoutes } from './routes.js';
import { approvedCallback, browserCode, loginOptions, loginRequest, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';

// A login whose own client credentials the login server refuses: every sign-in fails the same way, so it must say
// what to fix (on the server's log) instead of telling the user to start again.

const WRONG_SECRET = 'not-the-client-secret-but-close';
let provider: TestProvider;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
});
afterAll(() => provider?.stop());
afterEach(() => void vi.restoreAllMocks());

function expectClientAuthFailed(error: { code: string; message: string; detail?: string }, secrets: string[]): void {
  expect(error.code).toBe('client_auth_failed');
  expect(error.message).toBe(LOGIN_ERRORS.client_auth_failed.message);
  expect(error.message).not.toMatch(/start again|refused the authorization code/);
  for (const secret of secrets) {
    expect(error.message).not.toContain(secret);
    expect(error.detail ?? '').not.toContain(secret);
  }
}

/** A fetch that answers the token endpoint with `answer` and passes everything else to the provider. */
function tokenEndpointAnswers(answer: () => Response): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return url.endsWith('/oauth2/token') ? answer() : fetch(input, init);
  };
}

describe('the login server refuses the client itself: client_auth_failed (500)', () => {
  it('for a wrong client secret (401 with a WWW-Authenticate challenge), with the settings to check in the detail', async () => {
    const login = await createLogin(loginOptions(provider, { clientSecret: WRONG_SECRET }));
    const error = await refusal(login.finish((await approvedCallback(login)).callback));
    expectClientAuthFailed(error, [WRONG_SECRET, provider.confidentialClient.clientSecret]);
    expect((error as KybLoginError).status).toBe(500);
    expect(error.detail).toMatch(/invalid_client \(401\)/);
    expect(error.detail).toMatch(/KYB_CLIENT_ID \/ KYB_CLIENT_SECRET/);
  });

  it('for a public client the login server does not allow without a secret', async () => {
    const login = await createLogin(loginOptions(provider, { clientSecret: undefined }));
    const error = await refusal(login.finish((await approvedCallback(login)).callback));
    expectClientAuthFailed(error, [provider.confidentialClient.clientSecret]);
    expect(error.detail).toMatch(/public client/);
    expect(error.detail).toMatch(/login server must allow this client id without a secret/);
  });

  it('in the backend exchange (exchangeCode) too', async () => {
    const login = await createLogin(loginOptions(provider, { clientSecret: WRONG_SECRET }));
    const { code, codeVerifier } = await browserCode(provider);
    expectClientAuthFailed(await refusal(login.exchangeCode({ code, codeVerifier })), [
      WRONG_SECRET,
      code,
      codeVerifier,
    ]);
  });

  it.each<[string, () => Response]>([
    ['invalid_client in a 400 JSON body', () => Response.json({ error: 'invalid_client' }, { status: 400 })],
    [
      'a 401 whose body is not an OAuth error',
      () => new Response('Unauthorized', { status: 401, headers: { 'content-type': 'text/plain' } }),
    ],
    [
      'a 401 with a challenge naming no error',
      () => new Response(null, { status: 401, headers: { 'www-authenticate': 'Basic realm="login"' } }),
    ],
  ])('for %s', async (_name, answer) => {
    const login = await createLogin(loginOptions(provider, { fetch: tokenEndpointAnswers(answer) }));
    expectClientAuthFailed(await refusal(login.finish((await approvedCallback(login)).callback)), [
      provider.confidentialClient.clientSecret,
    ]);
  });

  it('for unauthorized_client (the client may not use this grant type: RFC 6749 5.2), on sign-in and on refresh', async () => {
    let refuse = false;
    const answer = () => Response.json({ error: 'unauthorized_client' }, { status: 400 });
    const login = await createLogin(
      loginOptions(provider, {
        fetch: async (input, init) => {
          const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
          return refuse && url.endsWith('/oauth2/token') ? answer() : fetch(input, init);
        },
      }),
    );
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    refuse = true;
    const signIn = await refusal(login.finish((await approvedCallback(login)).callback));
    expectClientAuthFailed(signIn, [provider.confidentialClient.clientSecret]);
    expect(signIn.detail).toMatch(
      /does not allow this app's client the authorization_code grant.*Register the grant types/,
    );
    const refresh = await refusal(login.refresh(tokens.refreshToken!, { claims }));
    expectClientAuthFailed(refresh, [provider.confidentialClient.clientSecret, tokens.refreshToken!]);
    expect(refresh.detail).toMatch(/the refresh_token grant/);
  });

  it('but not for a refused grant (control: invalid_grant stays code_exchange_failed)', async () => {
    const login = await createLogin(
      loginOptions(provider, {
        fetch: tokenEndpointAnswers(() => Response.json({ error: 'invalid_grant' }, { status: 400 })),
      }),
    );
    expect((await refusal(login.finish((await approvedCallback(login)).callback))).code).toBe('code_exchange_failed');
  });
});

describe('the login routes answer it and log it', () => {
  it('answer 500 client_auth_failed and print one line without the secret by default', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const login = await createLogin(loginOptions(provider, { clientSecret: WRONG_SECRET }));
    const answer = await new LoginRoutes(login).callback((await approvedCallback(login)).callback, undefined);
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body!)).toEqual({
      error: 'client_auth_failed',
      message: LOGIN_ERRORS.client_auth_failed.message,
    });
    expect(errors).toHaveBeenCalledTimes(1);
    const line = String(errors.mock.calls[0]![0]);
    expect(line).toMatch(/^kyb-login error 500 client_auth_failed: .*KYB_CLIENT_ID \/ KYB_CLIENT_SECRET/);
    expect(line).not.toContain('\n');
    expect(line).not.toContain(WRONG_SECRET);
    expect(line).not.toContain(provider.confidentialClient.clientSecret);
  });

  it("print nothing for the user's own mistakes (4xx)", async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const login = await createLogin(loginOptions(provider));
    const { callbackUrl } = await approvedCallback(login);
    // The callback without the transaction cookie, as from another browser.
    const answer = await new LoginRoutes(login).callback(loginRequest(callbackUrl), undefined);
    expect(answer.status).toBe(400);
    expect(errors).not.toHaveBeenCalled();
  });

  it('hand it to onError instead, when given', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const seen: KybLoginError[] = [];
    const login = await createLogin(loginOptions(provider, { clientSecret: WRONG_SECRET }));
    await new LoginRoutes(login, { onError: (error) => void seen.push(error) }).callback(
      (await approvedCallback(login)).callback,
      undefined,
    );
    expect(seen.map((error) => error.code)).toEqual(['client_auth_failed']);
    expect(errors).not.toHaveBeenCalled();
  });
});
