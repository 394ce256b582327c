import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS } from './errors.js';
import { createLogin, type Login } from './login.js';
import { loginOptions, loginRequest, refusal } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';
import type { LoginRequest } from './types.js';

// A redirectUri given as a path is resolved against the request's origin: where the login server sends the browser
// back (the authorization URL's redirect_uri), and what a request with a Host that is no host name is told.

let provider: TestProvider;
let direct: Login;
let proxied: Login;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: ['https://shop.example/auth/callback'] });
  direct = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
  proxied = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback', trustProxy: true }));
});
afterAll(() => provider?.stop());

/** The redirect_uri of the authorization URL the start route sends the browser to. */
async function redirectUriOf(login: Login, request: LoginRequest): Promise<string | null> {
  return (await login.start(request)).url.searchParams.get('redirect_uri');
}

describe('a path redirectUri', () => {
  it('is on https for a request that came over TLS, with Secure cookies', async () => {
    const request = loginRequest('https://shop.example/auth/login');
    expect(await redirectUriOf(direct, request)).toBe('https://shop.example/auth/callback');
    const { setCookie } = await direct.start(request);
    expect(setCookie[0]).toMatch(/^__Secure-kyb-login-tx-/);
    expect(setCookie[0]).toMatch(/; Secure/);
  });

  it('reads the Host header with the whitespace around it taken off', async () => {
    const request = loginRequest('http://127.0.0.1:9/auth/login', [], { host: '  localhost:8080 ' });
    expect(await redirectUriOf(direct, request)).toBe('http://localhost:8080/auth/callback');
  });

  // Without Secure the cookies lose their __Host- prefix, so a sibling subdomain could plant its own login in the
  // browser (login CSRF), and the code would cross the network in clear text: what a TLS proxy without trustProxy
  // looked like, answered without a word.
  it.each<[string, string, Record<string, string>, boolean]>([
    ['plain http for a real host', 'http://127.0.0.1:9/auth/login', { host: 'shop.example' }, false],
    [
      'a proxy saying http, with trustProxy',
      'http://127.0.0.1:9/auth/login',
      { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'shop.example' },
      true,
    ],
    [
      'a proxy saying https, without trustProxy',
      'http://127.0.0.1:9/auth/login',
      { 'x-forwarded-proto': 'https', host: 'shop.example' },
      false,
    ],
  ])(
    'is refused when it resolves to %s: config_invalid naming trustProxy, no cookie set',
    async (_case, url, headers, trust) => {
      const login = trust ? proxied : direct;
      const error = await refusal(login.start(loginRequest(url, [], headers)));
      expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
      expect(error.message).toMatch(/set trustProxy: true/);
      expect(error.message).not.toContain('shop.example');
    },
  );

  it('stays on plain http on loopback hosts (local development)', async () => {
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']) {
      const request = loginRequest('http://127.0.0.1:9/auth/login', [], { host });
      expect(await redirectUriOf(direct, request)).toBe(`http://${host}/auth/callback`);
    }
  });

  it('with trustProxy, takes the first X-Forwarded-Host and X-Forwarded-Proto, trimmed', async () => {
    const request = loginRequest('http://127.0.0.1:9/auth/login', [], {
      'x-forwarded-host': ' shop.example , internal.proxy',
      'x-forwarded-proto': ' HTTPS , http',
    });
    expect(await redirectUriOf(proxied, request)).toBe('https://shop.example/auth/callback');
  });

  it('without trustProxy, ignores the forwarded headers', async () => {
    const request = loginRequest('http://127.0.0.1:9/auth/login', [], {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    expect(await redirectUriOf(direct, request)).toBe('http://127.0.0.1:9/auth/callback');
  });
});

describe('a path redirectUri with cookies.secure: false', () => {
  it('is refused on an https request with config_invalid naming the fix, and still works over plain http', async () => {
    const insecure = await createLogin(
      loginOptions(provider, { redirectUri: '/auth/callback', cookies: { secure: false } }),
    );
    const error = await refusal(insecure.start(loginRequest('https://shop.example/auth/login')));
    expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
    expect(error.message).toMatch(/^cookies\.secure: false, but the path redirectUri resolves to https/);
    expect(error.message).toMatch(/remove cookies\.secure/);
    const { setCookie } = await insecure.start(loginRequest('http://127.0.0.1:9/auth/login'));
    expect(setCookie[0]).toMatch(/^kyb-login-tx-/);
    expect(setCookie[0]).not.toMatch(/; Secure/);
  });
});

describe('a request whose origin is no origin is refused: 400 host_invalid', () => {
  const fix = /an absolute redirectUri does not read it/;

  it('without a Host header', async () => {
    const request: LoginRequest = { url: '/auth/login', header: () => undefined, encrypted: false };
    const error = await refusal(direct.start(request));
    expect(error).toMatchObject({ code: 'host_invalid', status: 400, message: LOGIN_ERRORS.host_invalid.message });
    expect(error.detail).toMatch(/the request has no Host header/);
    expect(error.detail).toMatch(fix);
  });

  it('with a Host that is no host name, naming the Host header', async () => {
    const error = await refusal(direct.start(loginRequest('/auth/login', [], { host: 'shop_example.com' })));
    expect(error).toMatchObject({ code: 'host_invalid', status: 400 });
    expect(error.detail).toMatch(/^the Host header is not a host name; /);
    expect(error.detail).toMatch(fix);
  });

  it('with trustProxy, an X-Forwarded-Host that is no host name, naming that header', async () => {
    const request = loginRequest('/auth/login', [], { 'x-forwarded-host': 'shop.example/evil' });
    const error = await refusal(proxied.start(request));
    expect(error).toMatchObject({ code: 'host_invalid', status: 400 });
    expect(error.detail).toMatch(/^the X-Forwarded-Host header is not a host name; /);
  });

  it('with trustProxy, an X-Forwarded-Proto other than http or https', async () => {
    const request = loginRequest('/auth/login', [], { 'x-forwarded-proto': 'ftp' });
    const error = await refusal(proxied.start(request));
    expect(error).toMatchObject({ code: 'host_invalid', status: 400 });
    expect(error.detail).toMatch(/X-Forwarded-Proto is neither http nor https/);
    expect(error.detail).toMatch(fix);
  });
});
