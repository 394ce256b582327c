import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as honoLogin from './hono.js';
import { createLogin, type Login } from './login.js';
import { mountHono } from './testing/apps.js';
import { loginConformanceSuite } from './testing/conformance.js';
import { loginOptions, REDIRECT_URI } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';

// The shared login cases (testing/conformance.ts) over real HTTP, on the app of testing/apps.ts.
loginConformanceSuite('Hono', mountHono);

describe('Hono requireUser and the request scheme', () => {
  let provider: TestProvider;
  let login: Login;
  let pathLogin: Login;
  beforeAll(async () => {
    provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
    login = await createLogin(loginOptions(provider));
    // A path redirect URI: the cookies are Secure on the requests that came over https.
    pathLogin = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
  });
  afterAll(() => provider?.stop());

  it('requireUser tells its onError why a request was refused', async () => {
    const errors: string[] = [];
    const app = new Hono();
    app.get('/api/me', honoLogin.requireUser(login, { onError: (error) => void errors.push(error.code) }), (c) =>
      c.text('ok'),
    );
    const answer = await app.request('http://127.0.0.1/api/me');
    expect(answer.status).toBe(401);
    expect(errors).toEqual(['token_missing']);
  });

  it('a start over https sets a Secure __Secure- transaction cookie, over http neither', async () => {
    const app = new Hono();
    app.get('/auth/login', honoLogin.loginHandlers(pathLogin).start);
    const secure = await app.request('https://shop.example/auth/login', { headers: { host: 'shop.example' } });
    expect(secure.status).toBe(302);
    const secureCookies = secure.headers.getSetCookie();
    expect(secureCookies.length).toBeGreaterThan(0);
    for (const cookie of secureCookies) expect(cookie).toMatch(/; Secure$/);
    expect(secureCookies.some((cookie) => cookie.startsWith('__Secure-kyb-login-tx-'))).toBe(true);
    const plain = await app.request('http://localhost:3000/auth/login', { headers: { host: 'localhost:3000' } });
    expect(plain.status).toBe(302);
    const plainCookies = plain.headers.getSetCookie();
    expect(plainCookies.length).toBeGreaterThan(0);
    for (const cookie of plainCookies) expect(cookie).not.toMatch(/Secure/);
    expect(new URL(plain.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
      'http://localhost:3000/auth/callback',
    );
  });
});
