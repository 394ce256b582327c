import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KybLoginError } from './errors.js';
import { createLogin, type Login } from './login.js';
import { LoginRoutes, type LoginResponse } from './routes.js';
import { approvedCallback, loginOptions, loginRequest, REDIRECT_URI } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';

// The framework-neutral answers every mount writes: status, headers in order, body, and what onError is told.

let provider: TestProvider;
let login: Login;
let noSessions: Login;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
  login = await createLogin(loginOptions(provider));
  noSessions = await createLogin(loginOptions(provider, { session: false }));
});
afterAll(() => provider?.stop());

const ERROR_HEADERS: Array<[string, string]> = [
  ['content-type', 'application/json; charset=utf-8'],
  ['cache-control', 'no-store'],
];

function body(answer: LoginResponse): { error: string; message: string } {
  return JSON.parse(answer.body!) as { error: string; message: string };
}

function routesWithErrors(of: Login = login, options: ConstructorParameters<typeof LoginRoutes>[1] = {}) {
  const errors: KybLoginError[] = [];
  const routes = new LoginRoutes<string>(of, { onError: (error) => errors.push(error), ...options });
  return { routes, errors };
}

const setCookies = (answer: LoginResponse): string[] =>
  answer.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value);

describe('the callback route', () => {
  it('without onLogin: 303 to the return path, the transaction cleared and the session set', async () => {
    const { callback } = await approvedCallback(login, { returnTo: '/orders?page=2' });
    const { routes, errors } = routesWithErrors();
    const answer = await routes.callback(callback, 'native');
    expect(errors).toEqual([]);
    expect(answer.status).toBe(303);
    expect(answer.headers.slice(-2)).toEqual([
      ['location', '/orders?page=2'],
      ['cache-control', 'no-store'],
    ]);
    const cookies = setCookies(answer);
    expect(cookies.some((cookie) => /^kyb-login-session=[^;]+;/.test(cookie))).toBe(true);
    expect(answer.headers.every(([name]) => ['set-cookie', 'location', 'cache-control'].includes(name))).toBe(true);
  });

  it('with session: false sets no session cookie, and still answers 303', async () => {
    const { callback } = await approvedCallback(noSessions);
    const answer = await new LoginRoutes(noSessions, { onError: () => undefined }).callback(callback, 'native');
    expect(answer.status).toBe(303);
    expect(setCookies(answer).some((cookie) => cookie.startsWith('kyb-login-session='))).toBe(false);
  });

  it('refuses a return path from onLogin on another site: 400 return_path_invalid, no session, no redirect', async () => {
    const { callback } = await approvedCallback(login);
    const { routes, errors } = routesWithErrors(login, { onLogin: () => 'https://evil.example/' });
    const answer = await routes.callback(callback, 'native');
    expect(answer.status).toBe(400);
    expect(body(answer).error).toBe('return_path_invalid');
    expect(answer.headers.some(([name]) => name === 'location')).toBe(false);
    expect(setCookies(answer).some((cookie) => cookie.startsWith('kyb-login-session='))).toBe(false);
    expect(answer.headers.slice(-2)).toEqual(ERROR_HEADERS);
    expect(errors.map((error) => [error.code, error.detail])).toEqual([
      ['return_path_invalid', 'onLogin returned a path that is not same-origin'],
    ]);
  });

  it('an onLogin that throws: 500 internal_error, the cause given to onError, nothing of it to the browser', async () => {
    const { callback } = await approvedCallback(login);
    const thrown = new Error('database down: postgres://user:pw@db');
    const { routes, errors } = routesWithErrors(login, {
      onLogin: () => {
        throw thrown;
      },
    });
    const answer = await routes.callback(callback, 'native');
    expect(answer.status).toBe(500);
    expect(body(answer)).toEqual({ error: 'internal_error', message: 'The sign-in failed unexpectedly.' });
    expect(answer.body).not.toContain('postgres');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(KybLoginError);
    expect(errors[0]!.detail).toBe('unexpected error');
    expect(errors[0]!.cause).toBe(thrown);
  });

  it('a failed callback clears its transaction cookie, and answers JSON that is not stored', async () => {
    const { callback, setCookie } = await approvedCallback(login);
    // The same callback without the authorization code.
    const url = new URL(callback.url, 'http://127.0.0.1:9');
    url.searchParams.delete('code');
    const answer = await routesWithErrors().routes.callback(loginRequest(url, setCookie), 'native');
    expect(answer.status).toBeGreaterThanOrEqual(400);
    const transactionName = setCookie[0]!.slice(0, setCookie[0]!.indexOf('='));
    expect(answer.headers[0]![0]).toBe('set-cookie');
    expect(answer.headers[0]![1].startsWith(`${transactionName}=;`)).toBe(true);
    expect(answer.headers.slice(-2)).toEqual(ERROR_HEADERS);
    expect(answer.headers.every(([name, value]) => typeof name === 'string' && typeof value === 'string')).toBe(true);
  });
});

describe('a callback whose Host is no host name (a path redirectUri)', () => {
  it('is refused with the JSON headers alone: no cookie can be named for it', async () => {
    const pathLogin = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
    const { routes, errors } = routesWithErrors(pathLogin);
    const request = loginRequest('/auth/callback?code=c&state=s', [], { host: 'shop example' });
    const answer = await routes.callback(request, 'native');
    expect(answer.status).toBe(400);
    expect(answer.headers).toEqual(ERROR_HEADERS);
    expect(errors.map((error) => error.code)).toEqual(['host_invalid']);
  });
});

describe('the start route', () => {
  it('a misconfiguration: 500 with the generic message to the browser, the fix to onError', async () => {
    const pathLogin = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
    const { routes, errors } = routesWithErrors(pathLogin);
    const answer = await routes.start(loginRequest('/auth/login', [], { host: 'shop.example' }), 'native');
    expect(answer.status).toBe(500);
    expect(answer.headers).toEqual(ERROR_HEADERS);
    expect(body(answer)).toEqual({ error: 'config_invalid', message: 'The login is misconfigured.' });
    expect(errors.map((error) => [error.code, /set trustProxy: true/.test(error.message)])).toEqual([
      ['config_invalid', true],
    ]);
  });

  it('a returnTo on another site: 400, with only the JSON headers', async () => {
    const { routes } = routesWithErrors();
    const answer = await routes.start(loginRequest('/auth/login?returnTo=https://evil.example/'), 'native');
    expect(answer.status).toBe(400);
    expect(answer.headers).toEqual(ERROR_HEADERS);
  });
});

describe('the logout route', () => {
  it('returns to a same-origin returnTo, else to /; never caches the answer', async () => {
    const { routes } = routesWithErrors();
    const back = await routes.logout(loginRequest('/auth/logout?returnTo=/bye'));
    expect(back.status).toBe(303);
    expect(back.headers.slice(1)).toEqual([
      ['location', '/bye'],
      ['cache-control', 'no-store'],
    ]);
    expect(back.headers[0]![0]).toBe('set-cookie');
    expect(back.headers[0]![1]).toMatch(/^kyb-login-session=;.*Max-Age=0/);
    const home = await routes.logout(loginRequest('/auth/logout?returnTo=//evil.example/'));
    expect(home.headers[1]).toEqual(['location', '/']);
  });

  it.each<[string, Record<string, string>, number]>([
    ['an empty Sec-Fetch-Site and a foreign Origin', { 'sec-fetch-site': '', origin: 'https://evil.example' }, 403],
    ['an Origin of this site with spaces around it', { origin: ' http://127.0.0.1:9 ' }, 303],
    ['an empty Origin (not a browser)', { origin: '' }, 303],
    ['Origin: null', { origin: 'null' }, 403],
    [
      'Sec-Fetch-Site: same-site with a foreign Origin',
      { 'sec-fetch-site': 'same-site', origin: 'https://evil.example' },
      303,
    ],
  ])('logout with %s', async (_name, headers, status) => {
    const { routes, errors } = routesWithErrors();
    const answer = await routes.logout(loginRequest('/auth/logout', [], headers), 'native');
    expect(answer.status).toBe(status);
    if (status === 403) {
      expect(body(answer).error).toBe('cross_site_request');
      expect(answer.headers).toEqual(ERROR_HEADERS);
      expect(errors[0]!.detail).toBe('a POST to logout whose Origin is not this site\u2019s (no Sec-Fetch-Site)');
    }
  });

  it('tells onError why a cross-site POST was refused', async () => {
    const { routes, errors } = routesWithErrors();
    const answer = await routes.logout(loginRequest('/auth/logout', [], { 'sec-fetch-site': 'cross-site' }), 'n');
    expect(answer.status).toBe(403);
    expect(errors[0]!.detail).toBe('a POST to logout from another site (Sec-Fetch-Site: cross-site)');
  });
});

describe('the guard (user)', () => {
  let accessToken: string;
  beforeAll(async () => {
    const { callback } = await approvedCallback(login);
    accessToken = (await login.finish(callback)).tokens.accessToken;
  });

  const guard = (authorization: string | undefined, options = {}, cookies: string[] = []) =>
    routesWithErrors().routes.user(
      loginRequest('/api/me', cookies, authorization === undefined ? {} : { authorization }),
      'native',
      options,
    );

  it('accepts a token after one or more spaces, and with spaces around the header', async () => {
    for (const authorization of [`Bearer ${accessToken}`, `Bearer   ${accessToken}`, `  bearer ${accessToken}  `]) {
      expect(await guard(authorization)).toMatchObject({ via: 'bearer' });
    }
  });

  it.each([
    ['a token followed by more', (t: string) => `Bearer ${t} extra`],
    ['junk before a token', (t: string) => `Bearer ,Bearer ${t}`],
    ['no token at all', () => 'Bearer'],
    ['no token behind spaces', () => '   Bearer   '],
  ])('refuses Bearer credentials with %s: 401 token_invalid, WWW-Authenticate invalid_token', async (_name, make) => {
    const { routes, errors } = routesWithErrors();
    const answer = (await routes.user(
      loginRequest('/api/me', [], { authorization: make(accessToken) }),
      'native',
    )) as LoginResponse;
    expect(answer.status).toBe(401);
    expect(body(answer).error).toBe('token_invalid');
    expect(answer.headers).toEqual([['www-authenticate', 'Bearer error="invalid_token"'], ...ERROR_HEADERS]);
    expect([errors[0]!.code, errors[0]!.detail]).toEqual(['token_invalid', 'the Bearer credentials are not a token']);
  });

  it('a token that cannot be checked (the login server\u2019s keys unreachable): 503, without WWW-Authenticate', async () => {
    let down = false;
    const keysDown = await createLogin(
      loginOptions(provider, {
        jwksCooldownMs: 0,
        fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
          if (down && String(input instanceof Request ? input.url : input).includes('/.well-known/jwks.json'))
            throw new TypeError('fetch failed');
          return fetch(input, init);
        }) as typeof fetch,
      }),
    );
    down = true;
    // Signed with a key the login does not know yet (a rotation): it must fetch the keys again, and cannot.
    const { privateKey } = await generateKeyPair('RS256');
    const rotated = await new SignJWT(decodeJwt(accessToken))
      .setProtectedHeader({ alg: 'RS256', kid: 'rotated-key', typ: 'at+jwt' })
      .sign(privateKey);
    const { routes, errors } = routesWithErrors(keysDown);
    const answer = (await routes.user(
      loginRequest('/api/me', [], { authorization: `Bearer ${rotated}` }),
      'native',
    )) as LoginResponse;
    expect(answer.status).toBe(503);
    expect(answer.headers).toEqual(ERROR_HEADERS);
    expect(errors.map((error) => error.code)).toEqual(['jwks_unavailable']);
  });

  it('another scheme is as no token: 401 token_missing with WWW-Authenticate: Bearer', async () => {
    for (const authorization of ['Basic dXNlcjpCearer', 'Basic Bearer', undefined]) {
      const { routes, errors } = routesWithErrors();
      const answer = (await routes.user(
        loginRequest('/api/me', [], authorization === undefined ? {} : { authorization }),
        'native',
      )) as LoginResponse;
      expect(answer.status).toBe(401);
      expect(answer.headers).toEqual([['www-authenticate', 'Bearer'], ...ERROR_HEADERS]);
      expect([errors[0]!.code, errors[0]!.detail]).toEqual(['token_missing', 'no bearer token']);
    }
  });

  it('a bearer-only route tells a request with a valid session why it is refused, and only then', async () => {
    const { callback } = await approvedCallback(login);
    const answer = await routesWithErrors().routes.callback(callback, 'native');
    const session = setCookies(answer).filter((cookie) => cookie.startsWith('kyb-login-session='));
    const { routes, errors } = routesWithErrors();
    const refused = (await routes.user(loginRequest('/api/me', session), 'native')) as LoginResponse;
    expect(refused.status).toBe(401);
    expect(body(refused).message).toMatch(/accepts a bearer access token only/);
    expect(errors[0]!.detail).toBe('a valid session on a bearer-only route (requireUser without { session: true })');
    const other = (await routes.user(loginRequest('/api/me', ['theme=dark']), 'native')) as LoginResponse;
    expect(body(other)).toEqual({ error: 'token_missing', message: 'A bearer token is required.' });
  });

  it('redirectToLogin: 303 to the start route, with returnTo only when the page is a safe path', async () => {
    const { routes } = routesWithErrors();
    const page = (await routes.user(loginRequest('/account?tab=1'), 'n', {
      session: true,
      redirectToLogin: '/auth/login',
    })) as LoginResponse;
    expect(page).toEqual({
      status: 303,
      headers: [
        ['location', '/auth/login?returnTo=%2Faccount%3Ftab%3D1'],
        ['cache-control', 'no-store'],
      ],
    });
    const odd = (await routes.user({ url: '//evil.example/x', header: () => undefined, encrypted: false }, 'n', {
      session: true,
      redirectToLogin: '/auth/login',
    })) as LoginResponse;
    expect(odd.headers[0]).toEqual(['location', '/auth/login']);
  });
});

describe('the default onError (console.error)', () => {
  it('prints a 5xx without detail as one line, and nothing for a 4xx', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const { callback } = await approvedCallback(login);
      const routes = new LoginRoutes(login, {
        onLogin: () => {
          throw new KybLoginError('internal_error', 'The user store refused the sign-in.');
        },
      });
      expect((await routes.callback(callback, 'native')).status).toBe(500);
      expect(printed.mock.calls).toEqual([['kyb-login error 500 internal_error: The user store refused the sign-in.']]);
      printed.mockClear();
      const refused = await routes.start(loginRequest('/auth/login?returnTo=https://evil.example/'), 'native');
      expect(refused.status).toBe(400);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });
});

describe('failure (an answer that could not be written)', () => {
  it('answers 500 internal_error and tells onError with the cause', async () => {
    const { routes, errors } = routesWithErrors();
    const cause = new Error('header refused');
    const answer = routes.failure(cause, 'native');
    expect(answer.status).toBe(500);
    expect(answer.headers).toEqual(ERROR_HEADERS);
    expect(body(answer).error).toBe('internal_error');
    expect([errors[0]!.detail, errors[0]!.cause]).toEqual(['the answer could not be written', cause]);
  });

  it('without onError prints one line with the detail and the cause\u2019s name', () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const cause = new Error('secret value');
      cause.name = 'Header\r\n\r\nError';
      new LoginRoutes(login).failure(cause, 'native');
      expect(printed.mock.calls).toEqual([
        [
          'kyb-login error 500 internal_error: The sign-in failed unexpectedly. \u2014 the answer could not be written ' +
            '(cause: Header Error, on error.cause in onError)',
        ],
      ]);
    } finally {
      printed.mockRestore();
    }
  });
});
