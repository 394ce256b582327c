/**
 * The login conformance suite: the same cases over real HTTP for every framework mount. Each framework's test file
 * supplies `mount` (see testing/apps.ts), which attaches the app of the same routes to an already listening server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KybLoginError } from '../errors.js';
import { createLogin, type Login, type LoginResult } from '../login.js';
import type { LoginRoutesOptions } from '../routes.js';
import { COOKIE_SECRET } from './flow.js';
import { startTestProvider, TEST_ADDRESS, type TestProvider } from './provider.js';
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
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await provider.stop();
    },
  };
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
      expect(cookie).toHaveLength(1);
      expect(cookie[0]).toMatch(/^kyb-login-tx=[^;]+; Path=\/auth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/);
      expect(start.headers.get('cache-control')).toBe('no-store');
    });

    it('clears the transaction cookie on the callback', async () => {
      const { callback } = await signedIn();
      const cookies = callback.headers.getSetCookie();
      expect(cookies.find((c) => c.startsWith('kyb-login-tx='))).toMatch(/^kyb-login-tx=; Path=\/auth\/callback; Max-Age=0/);
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
      const transactionCookie = agent.cookies.get('kyb-login-tx')!;
      expect((await agent.request(callbackUrl)).status).toBe(303);
      const replay = await fetch(callbackUrl, { headers: { cookie: `kyb-login-tx=${transactionCookie}` }, redirect: 'manual' });
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
  });
}
