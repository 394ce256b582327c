/**
 * The login conformance suite: the same cases over real HTTP for every framework mount. Each framework's test file
 * supplies `mount` (see testing/apps.ts), which attaches the app of the same routes to an already listening server.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS, type KybLoginError } from '../errors.js';
import { createLogin, type Login, type LoginResult } from '../login.js';
import type { LoginRoutesOptions } from '../routes.js';
import { COOKIE_SECRET } from './flow.js';
import { startTestProvider, TEST_ADDRESS, type TestProvider } from './provider.js';
import { claimsOf, craftToken, tamperingFetch } from './tokens.js';
import { approveAtProvider, UserAgent } from './user-agent.js';

/** What the suite hands the framework: the login, and the hooks to pass to loginHandlers. */
export type MountApp = (server: Server, login: Login, hooks: LoginRoutesOptions<unknown>) => Promise<void> | void;

/** A running app on 127.0.0.1 with its own provider, as the browser test uses it too. */
export interface RunningApp {
  origin: string;
  provider: TestProvider;
  login: Login;
  logins: LoginResult[];
  errors: KybLoginError[];
  /** What onLogin returns next (a path to go to instead of returnTo), when set. */
  nextLoginRedirect: { value: string | undefined };
  /** When set, the ID token of the next token responses is replaced by the one it makes from the genuine claims. */
  forgeIdToken: { value: ((claims: Record<string, unknown>) => Promise<string>) | undefined };
  stop(): Promise<void>;
}

/** Listens first (the redirect URI holds the port), then starts the provider and the login, then mounts the app. */
export async function startApp(mount: MountApp): Promise<RunningApp> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await startTestProvider({ redirectUris: [`${origin}/auth/callback`] });
  const logins: LoginResult[] = [];
  const errors: KybLoginError[] = [];
  const nextLoginRedirect: { value: string | undefined } = { value: undefined };
  const forgeIdToken: RunningApp['forgeIdToken'] = { value: undefined };
  const known = new Set<string>();
  const login = await createLogin({
    authUrl: provider.issuer,
    clientId: provider.confidentialClient.clientId,
    clientSecret: provider.confidentialClient.clientSecret,
    redirectUri: `${origin}/auth/callback`,
    audience: provider.audiences[0]!,
    secret: COOKIE_SECRET,
    allowInsecureRequests: true,
    upsertUser: (userId) => !known.has(userId) && Boolean(known.add(userId)),
    fetch: tamperingFetch(async (body) => (forgeIdToken.value ? { ...body, id_token: await forgeIdToken.value(claimsOf(body.id_token) as Record<string, unknown>) } : body)),
  });
  await mount(server, login, {
    onLogin: (result) => {
      logins.push(result);
      return nextLoginRedirect.value;
    },
    onError: (error) => void errors.push(error),
  });
  return {
    origin,
    provider,
    login,
    logins,
    errors,
    nextLoginRedirect,
    forgeIdToken,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await provider.stop();
    },
  };
}

/**
 * One request over node:http, which (unlike fetch) sends any Host header as given; the answer's status, JSON body
 * and Set-Cookie lines.
 */
function rawRequest(origin: string, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; contentType: string | undefined; body: string; setCookie: string[] }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, method, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, contentType: response.headers['content-type'], body, setCookie: response.headers['set-cookie'] ?? [] }));
    });
    request.setTimeout(5000, () => request.destroy(new Error(`no answer to ${method} ${path} within 5 s`)));
    request.on('error', reject);
    request.end();
  });
}

/** Runs the shared cases against one framework. */
export function loginConformanceSuite(framework: string, mount: MountApp): void {
  describe(`login routes on ${framework}`, () => {
    let app: RunningApp;
    beforeAll(async () => {
      app = await startApp(mount);
    });
    afterAll(() => app?.stop());

    /** Through the app's start route and the provider; returns the agent and the callback URL, not yet requested. */
    async function upToCallback(returnTo?: string): Promise<{ agent: UserAgent; callbackUrl: URL }> {
      const agent = new UserAgent();
      const start = await agent.request(`${app.origin}/auth/login${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`);
      expect(start.status).toBe(302);
      return { agent, callbackUrl: await approveAtProvider(agent, start.headers.get('location')!) };
    }

    /** The one transaction cookie the agent holds, as [name, value]. */
    function transactionCookie(agent: UserAgent): [string, string] {
      const found = [...agent.cookies].filter(([name]) => name.startsWith('kyb-login-tx'));
      expect(found).toHaveLength(1);
      return found[0]!;
    }

    async function signedIn(returnTo?: string): Promise<{ agent: UserAgent; callback: Response }> {
      const { agent, callbackUrl } = await upToCallback(returnTo);
      return { agent, callback: await agent.request(callbackUrl) };
    }

    it('signs in end to end: back to returnTo with a session, the user id from svcid:', async () => {
      const before = app.logins.length;
      const { agent, callback } = await signedIn('/me?from=test');
      expect(callback.status).toBe(303);
      expect(callback.headers.get('location')).toBe('/me?from=test');
      expect(app.logins.length).toBe(before + 1);
      expect(app.logins.at(-1)).toMatchObject({ userId: TEST_ADDRESS, tokens: { tokenType: 'bearer' } });
      const me = await agent.request(`${app.origin}/me`);
      expect(me.status).toBe(200);
      expect(await me.json()).toEqual({ userId: TEST_ADDRESS, via: 'session' });
    });

    it('starts with every spec 4.1 parameter and an httpOnly SameSite=Lax transaction cookie', async () => {
      const start = await fetch(`${app.origin}/auth/login`, { redirect: 'manual' });
      const url = new URL(start.headers.get('location')!);
      expect(url.searchParams.get('redirect_uri')).toBe(`${app.origin}/auth/callback`);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect([url.searchParams.get('prompt'), url.searchParams.get('access_type'), url.searchParams.get('audience')]).toEqual(['consent', 'offline', app.provider.audiences[0]]);
      const cookie = start.headers.getSetCookie();
      expect(cookie).toHaveLength(2);
      expect(cookie[0]).toMatch(/^kyb-login-tx-[0-9a-z]+=[^;]+; Path=\/auth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/);
      // The browser binding (plain http on loopback: no Secure, so not __Host-): an id, and the pending login's tag.
      expect(cookie[1]).toMatch(/^kyb-login-bind=[A-Za-z0-9_-]{43}\.[0-9a-z]{13}:[0-9a-z]+:[0-9a-z]+; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax$/);
      expect(start.headers.get('cache-control')).toBe('no-store');
    });

    it('clears the transaction cookie on the callback', async () => {
      const { callback } = await signedIn();
      const cookies = callback.headers.getSetCookie();
      expect(cookies.find((c) => c.startsWith('kyb-login-tx-'))).toMatch(/^kyb-login-tx-[0-9a-z]+=; Path=\/auth\/callback; Max-Age=0/);
      expect(cookies.find((c) => c.startsWith('kyb-login-session='))).toMatch(/; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/);
    });

    it('says when a user signs in for the first time (isNewUser)', async () => {
      const address = '0x00000000000000000000000000000000000000b2';
      const fresh = new UserAgent();
      const start = await fresh.request(`${app.origin}/auth/login`);
      const first = await fresh.request(await approveAtProvider(fresh, start.headers.get('location')!, address));
      expect(first.status).toBe(303);
      expect(app.logins.at(-1)).toMatchObject({ userId: address, isNewUser: true });
      const again = new UserAgent();
      const restart = await again.request(`${app.origin}/auth/login`);
      await again.request(await approveAtProvider(again, restart.headers.get('location')!, address));
      expect(app.logins.at(-1)).toMatchObject({ userId: address, isNewUser: false });
    });

    it('goes where onLogin says, when it returns a path', async () => {
      app.nextLoginRedirect.value = '/welcome';
      try {
        const { callback } = await signedIn('/me');
        expect(callback.headers.get('location')).toBe('/welcome');
      } finally {
        app.nextLoginRedirect.value = undefined;
      }
    });

    it('refuses a callback with another state: 400 state_mismatch, no session', async () => {
      const { agent, callbackUrl } = await upToCallback();
      callbackUrl.searchParams.set('state', 'forged');
      const callback = await agent.request(callbackUrl);
      expect(callback.status).toBe(400);
      expect(await callback.json()).toMatchObject({ error: 'state_mismatch' });
      expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
      expect(app.errors.at(-1)?.code).toBe('state_mismatch');
      expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
    });

    it('refuses a replayed callback', async () => {
      const { agent, callbackUrl } = await upToCallback();
      const [name, value] = transactionCookie(agent);
      const binding = `kyb-login-bind=${agent.cookies.get('kyb-login-bind')}`;
      expect((await agent.request(callbackUrl)).status).toBe(303);
      const replay = await fetch(callbackUrl, { headers: { cookie: `${name}=${value}; ${binding}` }, redirect: 'manual' });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: 'transaction_replayed' });
    });

    it('refuses a callback without the transaction cookie (login started in another browser)', async () => {
      const { callbackUrl } = await upToCallback();
      const callback = await fetch(callbackUrl, { redirect: 'manual' });
      expect(callback.status).toBe(400);
      expect(await callback.json()).toMatchObject({ error: 'transaction_missing' });
    });

    it('refuses a return path to another origin before anything starts', async () => {
      const start = await fetch(`${app.origin}/auth/login?returnTo=${encodeURIComponent('//evil.example/x')}`, { redirect: 'manual' });
      expect(start.status).toBe(400);
      expect(await start.json()).toMatchObject({ error: 'return_path_invalid' });
      expect(start.headers.get('location')).toBeNull();
      expect(start.headers.getSetCookie()).toEqual([]);
    });

    it('lets a verified bearer access token through requireUser', async () => {
      await signedIn();
      const { accessToken } = app.logins.at(-1)!.tokens;
      const me = await fetch(`${app.origin}/api/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toEqual({ userId: TEST_ADDRESS, via: 'bearer' });
    });

    it('answers 401 with WWW-Authenticate: Bearer without a token', async () => {
      const me = await fetch(`${app.origin}/api/me`);
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toBe('Bearer');
      expect(await me.json()).toMatchObject({ error: 'token_missing' });
    });

    it('refuses an ID token as a bearer token (wrong audience)', async () => {
      await signedIn();
      const me = await fetch(`${app.origin}/api/me`, { headers: { authorization: `Bearer ${app.logins.at(-1)!.tokens.idToken}` } });
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(await me.json()).toMatchObject({ error: 'token_invalid' });
    });

    it('does not take the session cookie on a bearer-only route', async () => {
      const { agent } = await signedIn();
      expect((await agent.request(`${app.origin}/api/me`)).status).toBe(401);
    });

    it('signs out: the session cookie is cleared', async () => {
      const { agent } = await signedIn();
      expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
      const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, { method: 'POST' });
      expect(out.status).toBe(303);
      expect(out.headers.get('location')).toBe('/bye');
      expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
    });

    it('returns to a non-ASCII return path, percent-encoded (the Location header is ASCII)', async () => {
      const { agent, callback } = await signedIn('/\u0101/caf\u00e9?q=\u00e9#\u00e9');
      expect(callback.status).toBe(303);
      expect(callback.headers.get('location')).toBe('/%C4%81/caf%C3%A9?q=%C3%A9#%C3%A9');
      expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
    });

    it('signs out to a non-ASCII return path, percent-encoded', async () => {
      const out = await fetch(`${app.origin}/auth/logout?returnTo=/%C4%81`, { method: 'POST', redirect: 'manual' });
      expect(out.status).toBe(303);
      expect(out.headers.get('location')).toBe('/%C4%81');
    });

    it('refuses a return path longer than 1024 bytes once percent-encoded, before anything starts', async () => {
      // 200 characters, but 1 201 bytes in the Location header and the transaction cookie.
      const start = await fetch(`${app.origin}/auth/login?returnTo=${encodeURIComponent(`/${'\u0101'.repeat(200)}`)}`, { redirect: 'manual' });
      expect(start.status).toBe(400);
      expect(await start.json()).toMatchObject({ error: 'return_path_invalid' });
      expect(start.headers.getSetCookie()).toEqual([]);
    });

    it('answers 500 internal_error, and keeps serving, when the framework refuses to write an answer', async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // A Set-Cookie value no HTTP stack writes (U+0101): the framework throws while writing the answer.
      const broken: Login = { ...app.login, start: async () => ({ url: new URL('https://login.example/'), setCookie: ['kyb-login-tx-x=\u0101'] }) };
      const errors: KybLoginError[] = [];
      try {
        await mount(server, broken, { onError: (error) => void errors.push(error) });
        for (let i = 0; i < 2; i++) {
          const start = await fetch(`${origin}/auth/login`, { redirect: 'manual' });
          expect(start.status).toBe(500);
          expect(await start.json()).toEqual({ error: 'internal_error', message: LOGIN_ERRORS.internal_error.message });
          expect(start.headers.get('location')).toBeNull();
          expect(start.headers.getSetCookie()).toEqual([]);
        }
        expect(errors.map((error) => error.code)).toEqual(['internal_error', 'internal_error']);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('lets two logins started in one browser both finish, in either order', async () => {
      const browser = new UserAgent();
      const first = await browser.request(`${app.origin}/auth/login?returnTo=/first`);
      const second = await browser.request(`${app.origin}/auth/login?returnTo=/second`);
      const firstCallback = await approveAtProvider(browser, first.headers.get('location')!);
      const secondCallback = await approveAtProvider(browser, second.headers.get('location')!);
      const back2 = await browser.request(secondCallback);
      expect([back2.status, back2.headers.get('location')]).toEqual([303, '/second']);
      const back1 = await browser.request(firstCallback);
      expect([back1.status, back1.headers.get('location')]).toEqual([303, '/first']);
      expect([...browser.cookies.keys()].filter((name) => name.startsWith('kyb-login-tx'))).toEqual([]);
    });

    it('keeps at most four other pending logins\u2019 cookies once a callback comes: abandoned logins do not pile up', async () => {
      const browser = new UserAgent();
      // Without its binding cookie (cleared, or lost) the start route cannot see the earlier logins: the callback can.
      for (let i = 0; i < 6; i++) {
        await (await browser.request(`${app.origin}/auth/login`)).body?.cancel();
        browser.cookies.delete('kyb-login-bind');
      }
      const last = await browser.request(`${app.origin}/auth/login?returnTo=/last`);
      const pending = () => [...browser.cookies.keys()].filter((name) => name.startsWith('kyb-login-tx-'));
      expect(pending()).toHaveLength(7);
      const back = await browser.request(await approveAtProvider(browser, last.headers.get('location')!));
      expect([back.status, back.headers.get('location')]).toEqual([303, '/last']);
      expect(pending()).toHaveLength(4);
    });

    it('keeps at most five pending logins once another starts: the oldest one\u2019s cookie is cleared', async () => {
      const browser = new UserAgent();
      const pending = () => [...browser.cookies.keys()].filter((name) => name.startsWith('kyb-login-tx-'));
      const first = await browser.request(`${app.origin}/auth/login?returnTo=/first`);
      for (let i = 0; i < 5; i++) await (await browser.request(`${app.origin}/auth/login`)).body?.cancel();
      const last = await browser.request(`${app.origin}/auth/login?returnTo=/last`);
      expect(pending()).toHaveLength(5);
      const firstBack = await browser.request(await approveAtProvider(browser, first.headers.get('location')!));
      expect(firstBack.status).toBe(400);
      expect(await firstBack.json()).toMatchObject({ error: 'state_mismatch' });
      const lastBack = await browser.request(await approveAtProvider(browser, last.headers.get('location')!));
      expect([lastBack.status, lastBack.headers.get('location')]).toEqual([303, '/last']);
    });

    it('lets a browser sign in after many logins with the longest return path: their cookies stay within 8 KB', async () => {
      const browser = new UserAgent();
      // A page that sends the browser to the start route again and again (or tabs left mid-login), each time with
      // the longest return path: before, the cookies outgrew the server's header limit and the user was locked out.
      const longest = `/${'a'.repeat(1023)}`;
      for (let i = 0; i < 9; i++) await (await browser.request(`${app.origin}/auth/login?returnTo=${longest}`)).body?.cancel();
      const last = await browser.request(`${app.origin}/auth/login?returnTo=/last`);
      const cookies = [...browser.cookies].filter(([name]) => name.startsWith('kyb-login-'));
      expect(cookies.map(([name, value]) => `${name}=${value}`).join('; ').length).toBeLessThan(8192 - 1024);
      const back = await browser.request(await approveAtProvider(browser, last.headers.get('location')!));
      expect([back.status, back.headers.get('location')]).toEqual([303, '/last']);
      expect((await browser.request(`${app.origin}/me`)).status).toBe(200);
    });

    it.each<[string, (app: RunningApp) => Promise<UserAgent>]>([
      ['a browser that never signed in', async () => new UserAgent()],
      [
        'a browser with its own login pending',
        async (running) => {
          const own = new UserAgent();
          await (await own.request(`${running.origin}/auth/login`)).body?.cancel();
          return own;
        },
      ],
    ])('refuses a transaction cookie planted in %s (cookie tossing by a sibling subdomain): 400 state_mismatch, no session', async (_name, victimOf) => {
      // The attacker starts a login in their own browser, approves it as themselves, and keeps the callback unused.
      const attacker = new UserAgent();
      const start = await attacker.request(`${app.origin}/auth/login`);
      const attackerCallback = await approveAtProvider(attacker, start.headers.get('location')!, '0x1111111111111111111111111111111111111111');
      const [name, value] = transactionCookie(attacker);
      // A page on a sibling subdomain sets that cookie for the parent domain, then sends the victim to the callback.
      const victim = await victimOf(app);
      victim.cookies.set(name, value);
      const logins = app.logins.length;
      const callback = await victim.request(attackerCallback);
      expect(callback.status).toBe(400);
      expect(await callback.json()).toMatchObject({ error: 'state_mismatch' });
      expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
      expect(app.logins.length).toBe(logins);
      expect((await victim.request(`${app.origin}/me`)).status).toBe(401);
    });

    describe('with a path redirectUri, a request whose Host is no host name', () => {
      const server = createServer();
      const errors: KybLoginError[] = [];
      let origin: string;
      beforeAll(async () => {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
        origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const login = await createLogin({
          authUrl: app.provider.issuer,
          clientId: app.provider.confidentialClient.clientId,
          clientSecret: app.provider.confidentialClient.clientSecret,
          redirectUri: '/auth/callback',
          trustProxy: true,
          audience: app.provider.audiences[0]!,
          secret: COOKIE_SECRET,
          allowInsecureRequests: true,
        });
        await mount(server, login, { onError: (error) => void errors.push(error) });
      });
      afterAll(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });

      it.each<[string, string, string, Record<string, string>]>([
        ['start', 'GET', '/auth/login', { host: 'shop_example.com' }],
        ['callback', 'GET', '/auth/callback?state=s&code=c', { host: 'shop_example.com' }],
        ['logout', 'POST', '/auth/logout', { host: 'shop_example.com' }],
        ['start (X-Forwarded-Host, trustProxy)', 'GET', '/auth/login', { 'x-forwarded-host': 'shop_example.com' }],
        ['callback (X-Forwarded-Host, trustProxy)', 'GET', '/auth/callback?state=s&code=c', { 'x-forwarded-host': 'shop_example.com' }],
        ['logout (X-Forwarded-Host, trustProxy)', 'POST', '/auth/logout', { 'x-forwarded-host': 'shop_example.com' }],
      ])('answers the %s route 400 host_invalid, as JSON and through onError', async (_name, method, path, headers) => {
        const before = errors.length;
        const answer = await rawRequest(origin, method, path, headers);
        expect(answer.status).toBe(400);
        expect(answer.contentType).toBe('application/json; charset=utf-8');
        expect(JSON.parse(answer.body)).toEqual({ error: 'host_invalid', message: LOGIN_ERRORS.host_invalid.message });
        expect(answer.setCookie).toEqual([]);
        expect(errors.slice(before).map((error) => error.code)).toEqual(['host_invalid']);
      });

      it.each<[string, Record<string, string>]>([
        ['Host', { host: 'shop_example.com' }],
        ['X-Forwarded-Host', { 'x-forwarded-host': 'shop_example.com' }],
      ])('answers a session-guarded page 400 host_invalid when the %s is no host name', async (_name, headers) => {
        const answer = await rawRequest(origin, 'GET', '/me', headers);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toEqual({ error: 'host_invalid', message: LOGIN_ERRORS.host_invalid.message });
      });
    });

    it('does not let a forged callback use up the browser\u2019s pending login', async () => {
      const { agent, callbackUrl } = await upToCallback('/me');
      const forged = await agent.request(`${app.origin}/auth/callback?state=forged&code=forged`);
      expect(forged.status).toBe(400);
      expect(await forged.json()).toMatchObject({ error: 'state_mismatch' });
      const genuine = await agent.request(callbackUrl);
      expect([genuine.status, genuine.headers.get('location')]).toEqual([303, '/me']);
    });

    it('refuses a callback without a code: 400 callback_invalid', async () => {
      const { agent, callbackUrl } = await upToCallback();
      callbackUrl.searchParams.delete('code');
      const callback = await agent.request(callbackUrl);
      expect(callback.status).toBe(400);
      expect(await callback.json()).toMatchObject({ error: 'callback_invalid' });
    });

    it.each<[string, (url: URL) => void]>([
      ['without iss', (url) => url.searchParams.delete('iss')],
      ['with the iss of another server', (url) => url.searchParams.set('iss', 'https://login.other.example')],
    ])('refuses a callback %s: 400 callback_invalid', async (_name, edit) => {
      const { agent, callbackUrl } = await upToCallback();
      edit(callbackUrl);
      const callback = await agent.request(callbackUrl);
      expect(callback.status).toBe(400);
      expect(await callback.json()).toMatchObject({ error: 'callback_invalid' });
      expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
    });

    it('falls back to the session when the Authorization header is not a Bearer token (HTTP Basic of a staging site)', async () => {
      const { agent } = await signedIn();
      const basic = { authorization: `Basic ${btoa('staging:password')}` };
      const page = await agent.request(`${app.origin}/me`, { headers: basic });
      expect(page.status).toBe(200);
      expect(await page.json()).toEqual({ userId: TEST_ADDRESS, via: 'session' });
      const api = await agent.request(`${app.origin}/api/me`, { headers: basic });
      expect(api.status).toBe(401);
      expect(api.headers.get('www-authenticate')).toBe('Bearer');
      expect(await api.json()).toMatchObject({ error: 'token_missing' });
    });

    it.each<[string, Record<string, string>]>([
      ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' }],
      ['an Origin of another site (no Sec-Fetch-Site)', { origin: 'http://evil.example' }],
      ['Origin: null (no Sec-Fetch-Site)', { origin: 'null' }],
    ])('refuses a sign-out sent from another site (%s): 403 cross_site_request, the session kept', async (_name, headers) => {
      const { agent } = await signedIn();
      const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, { method: 'POST', headers });
      expect(out.status).toBe(403);
      expect(await out.json()).toMatchObject({ error: 'cross_site_request' });
      expect(out.headers.getSetCookie()).toEqual([]);
      expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
    });

    it.each<[string, (origin: string) => Record<string, string>]>([
      ['Sec-Fetch-Site: same-origin', (origin) => ({ 'sec-fetch-site': 'same-origin', origin })],
      ['Sec-Fetch-Site: same-site', () => ({ 'sec-fetch-site': 'same-site', origin: 'http://www.127.0.0.1.example' })],
      ['this site\u2019s Origin (no Sec-Fetch-Site)', (origin) => ({ origin })],
    ])('signs out a request from this site (%s)', async (_name, headers) => {
      const { agent } = await signedIn();
      const out = await agent.request(`${app.origin}/auth/logout`, { method: 'POST', headers: headers(app.origin) });
      expect(out.status).toBe(303);
      expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
    });

    it('signs out from an HTML form (an application/x-www-form-urlencoded body), with no body parser added', async () => {
      const { agent } = await signedIn();
      const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, { method: 'POST', form: { submit: 'Sign out' } });
      expect([out.status, out.headers.get('location')]).toEqual([303, '/bye']);
      expect(out.headers.getSetCookie().some((c) => /^kyb-login-session=; /.test(c))).toBe(true);
      expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
    });

    it('says on a bearer-only route that the request\u2019s valid session counts only with { session: true }', async () => {
      const { agent } = await signedIn();
      const api = await agent.request(`${app.origin}/api/me`);
      expect(api.status).toBe(401);
      expect(api.headers.get('www-authenticate')).toBe('Bearer');
      const body = (await api.json()) as { error: string; message: string };
      expect(body.error).toBe('token_missing');
      expect(body.message).toMatch(/bearer access token only.*valid session cookie.*requireUser\(login, \{ session: true \}\)/);
      // Without a session the message stays the generic one.
      expect(await (await fetch(`${app.origin}/api/me`)).json()).toEqual({ error: 'token_missing', message: LOGIN_ERRORS.token_missing.message });
    });

    it('sends a page visitor without a session to the login route and back (redirectToLogin)', async () => {
      const browser = new UserAgent();
      const page = await browser.request(`${app.origin}/page?tab=2`);
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toBe(`/auth/login?returnTo=${encodeURIComponent('/page?tab=2')}`);
      await page.body?.cancel();
      const start = await browser.request(new URL(page.headers.get('location')!, app.origin));
      const back = await browser.request(await approveAtProvider(browser, start.headers.get('location')!));
      expect([back.status, back.headers.get('location')]).toEqual([303, '/page?tab=2']);
      const again = await browser.request(`${app.origin}/page?tab=2`);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ userId: TEST_ADDRESS, via: 'session' });
    });

    it('answers a page 401, not a redirect, for an invalid bearer token (redirectToLogin is for missing sign-ins only)', async () => {
      const page = await fetch(`${app.origin}/page`, { headers: { authorization: 'Bearer not.a.token' }, redirect: 'manual' });
      expect(page.status).toBe(401);
      expect(await page.json()).toMatchObject({ error: 'token_invalid' });
    });

    it('refuses a callback whose ID token names another issuer: 401 token_invalid about the token, not 503 issuer_mismatch', async () => {
      const { agent, callbackUrl } = await upToCallback();
      app.forgeIdToken.value = (claims) => craftToken(app.provider.signingKey, { ...claims, iss: 'https://login.other.example' });
      try {
        const errors = app.errors.length;
        const callback = await agent.request(callbackUrl);
        expect(callback.status).toBe(401);
        const body = (await callback.json()) as { error: string; message: string };
        expect(body.error).toBe('token_invalid');
        expect(body.message).toMatch(/ID token was not issued by this site\u2019s login server/);
        expect(app.errors.slice(errors).map((error) => error.code)).toEqual(['token_invalid']);
        expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
      } finally {
        app.forgeIdToken.value = undefined;
      }
    });

    it('refuses a transaction cookie moved under another login\u2019s name, without using up that login', async () => {
      const browser = new UserAgent();
      const pending = () => [...browser.cookies.keys()].filter((name) => name.startsWith('kyb-login-tx-'));
      const first = await browser.request(`${app.origin}/auth/login?returnTo=/first`);
      const [firstName] = pending();
      const second = await browser.request(`${app.origin}/auth/login?returnTo=/second`);
      const secondName = pending().find((name) => name !== firstName)!;
      const firstCallback = await approveAtProvider(browser, first.headers.get('location')!);
      const secondCallback = await approveAtProvider(browser, second.headers.get('location')!);
      // The first login's sealed transaction, under the name of the second's (the browser keeps the first's too).
      browser.cookies.set(secondName, browser.cookies.get(firstName!)!);
      const moved = await browser.request(secondCallback);
      expect(moved.status).toBe(400);
      expect(await moved.json()).toMatchObject({ error: 'state_mismatch' });
      expect(moved.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
      const genuine = await browser.request(firstCallback);
      expect([genuine.status, genuine.headers.get('location')]).toEqual([303, '/first']);
    });

    it('takes the user id as everything after svcid: (a did:pkh subject, colons and all)', async () => {
      const address = 'did:pkh:eip155:1:0xabc';
      const browser = new UserAgent();
      const start = await browser.request(`${app.origin}/auth/login`);
      const back = await browser.request(await approveAtProvider(browser, start.headers.get('location')!, address));
      expect(back.status).toBe(303);
      expect(app.logins.at(-1)).toMatchObject({ userId: address, claims: { sub: `svcid:${address}` } });
      expect(await (await browser.request(`${app.origin}/me`)).json()).toEqual({ userId: address, via: 'session' });
    });
  });
}
