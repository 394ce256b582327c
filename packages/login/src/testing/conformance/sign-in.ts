/**
 * Signing in through the routes: the start route's redirect and cookies, the callback back to the return path with a session, the
 * user id, isNewUser and onLogin's answer, and return paths refused before anything starts.
 */
import { expect, it } from 'vitest';
import { TEST_ADDRESS } from '../provider.js';
import { approveAtProvider, UserAgent } from '../user-agent.js';
import type { ConformanceSuite } from './app.js';

export function signInCases(suite: ConformanceSuite): void {
  it('signs in end to end: back to returnTo with a session, the user id from svcid:', async () => {
    const { app } = suite;
    const before = app.logins.length;
    const { agent, callback } = await suite.signedIn('/me?from=test');
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/me?from=test');
    expect(app.logins.length).toBe(before + 1);
    expect(app.logins.at(-1)).toMatchObject({ userId: TEST_ADDRESS, tokens: { tokenType: 'bearer' } });
    const me = await agent.request(`${app.origin}/me`);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ userId: TEST_ADDRESS, via: 'session' });
  });

  it('starts with every spec 4.1 parameter and an httpOnly SameSite=Lax transaction cookie', async () => {
    const { app } = suite;
    const start = await fetch(`${app.origin}/auth/login`, { redirect: 'manual' });
    const url = new URL(start.headers.get('location')!);
    expect(url.searchParams.get('redirect_uri')).toBe(`${app.origin}/auth/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect([
      url.searchParams.get('prompt'),
      url.searchParams.get('access_type'),
      url.searchParams.get('audience'),
    ]).toEqual(['consent', 'offline', app.provider.audiences[0]]);
    const cookie = start.headers.getSetCookie();
    expect(cookie).toHaveLength(2);
    expect(cookie[0]).toMatch(
      /^kyb-login-tx-[0-9a-z]+=[^;]+; Path=\/auth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    // The browser binding (plain http on loopback: no Secure, so not __Host-): an id, and the pending login's tag.
    expect(cookie[1]).toMatch(
      /^kyb-login-bind=[A-Za-z0-9_-]{43}\.[0-9a-z]{13}:[0-9a-z]+:[0-9a-z]+; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax$/,
    );
    expect(start.headers.get('cache-control')).toBe('no-store');
    // A redirect says all in its Location: no body, whatever the framework writes by default (Koa: "Found").
    expect(await start.text()).toBe('');
  });

  it('clears the transaction cookie on the callback', async () => {
    const { callback } = await suite.signedIn();
    const cookies = callback.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith('kyb-login-tx-'))).toMatch(
      /^kyb-login-tx-[0-9a-z]+=; Path=\/auth\/callback; Max-Age=0/,
    );
    expect(cookies.find((c) => c.startsWith('kyb-login-session='))).toMatch(
      /; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/,
    );
    expect(await callback.text()).toBe('');
  });

  it('says when a user signs in for the first time (isNewUser)', async () => {
    const { app } = suite;
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
    const { app } = suite;
    app.nextLoginRedirect.value = '/welcome';
    try {
      const { callback } = await suite.signedIn('/me');
      expect(callback.headers.get('location')).toBe('/welcome');
    } finally {
      app.nextLoginRedirect.value = undefined;
    }
  });

  it('refuses a return path to another origin before anything starts', async () => {
    const { app } = suite;
    const start = await fetch(`${app.origin}/auth/login?returnTo=${encodeURIComponent('//evil.example/x')}`, {
      redirect: 'manual',
    });
    expect(start.status).toBe(400);
    expect(await start.json()).toMatchObject({ error: 'return_path_invalid' });
    expect(start.headers.get('location')).toBeNull();
    expect(start.headers.getSetCookie()).toEqual([]);
  });

  it('returns to a non-ASCII return path, percent-encoded (the Location header is ASCII)', async () => {
    const { app } = suite;
    const { agent, callback } = await suite.signedIn('/\u0101/caf\u00e9?q=\u00e9#\u00e9');
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/%C4%81/caf%C3%A9?q=%C3%A9#%C3%A9');
    expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
  });

  it('refuses a return path longer than 1024 bytes once percent-encoded, before anything starts', async () => {
    const { app } = suite;
    // 200 characters, but 1 201 bytes in the Location header and the transaction cookie.
    const start = await fetch(`${app.origin}/auth/login?returnTo=${encodeURIComponent(`/${'\u0101'.repeat(200)}`)}`, {
      redirect: 'manual',
    });
    expect(start.status).toBe(400);
    expect(await start.json()).toMatchObject({ error: 'return_path_invalid' });
    expect(start.headers.getSetCookie()).toEqual([]);
  });

  it('takes the user id as everything after svcid: (a did:pkh subject, colons and all)', async () => {
    const { app } = suite;
    const address = 'did:pkh:eip155:1:0xabc';
    const browser = new UserAgent();
    const start = await browser.request(`${app.origin}/auth/login`);
    const back = await browser.request(await approveAtProvider(browser, start.headers.get('location')!, address));
    expect(back.status).toBe(303);
    expect(app.logins.at(-1)).toMatchObject({ userId: address, claims: { sub: `svcid:${address}` } });
    expect(await (await browser.request(`${app.origin}/me`)).json()).toEqual({ userId: address, via: 'session' });
  });
}
