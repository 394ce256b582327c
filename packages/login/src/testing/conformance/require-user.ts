/**
 * requireUser: bearer access tokens on API routes, the session on pages, the 401 answers and redirectToLogin.
 */
import { expect, it } from 'vitest';
import { LOGIN_ERRORS } from '../../errors.js';
import { TEST_ADDRESS } from '../provider.js';
import { approveAtProvider, UserAgent } from '../user-agent.js';
import type { ConformanceSuite } from './app.js';

export function requireUserCases(suite: ConformanceSuite): void {
  it('lets a verified bearer access token through requireUser', async () => {
    const { app } = suite;
    await suite.signedIn();
    const { accessToken } = app.logins.at(-1)!.tokens;
    const me = await fetch(`${app.origin}/api/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ userId: TEST_ADDRESS, via: 'bearer' });
  });

  it('answers 401 with WWW-Authenticate: Bearer without a token', async () => {
    const { app } = suite;
    const me = await fetch(`${app.origin}/api/me`);
    expect(me.status).toBe(401);
    expect(me.headers.get('www-authenticate')).toBe('Bearer');
    expect(await me.json()).toMatchObject({ error: 'token_missing' });
  });

  it('refuses an ID token as a bearer token (wrong audience)', async () => {
    const { app } = suite;
    await suite.signedIn();
    const me = await fetch(`${app.origin}/api/me`, {
      headers: { authorization: `Bearer ${app.logins.at(-1)!.tokens.idToken}` },
    });
    expect(me.status).toBe(401);
    expect(me.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await me.json()).toMatchObject({ error: 'token_invalid' });
  });

  it('does not take the session cookie on a bearer-only route', async () => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    expect((await agent.request(`${app.origin}/api/me`)).status).toBe(401);
  });

  it('falls back to the session when the Authorization header is not a Bearer token (HTTP Basic of a staging site)', async () => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    const basic = { authorization: `Basic ${btoa('staging:password')}` };
    const page = await agent.request(`${app.origin}/me`, { headers: basic });
    expect(page.status).toBe(200);
    expect(await page.json()).toEqual({ userId: TEST_ADDRESS, via: 'session' });
    const api = await agent.request(`${app.origin}/api/me`, { headers: basic });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe('Bearer');
    expect(await api.json()).toMatchObject({ error: 'token_missing' });
  });

  it('says on a bearer-only route that the request\u2019s valid session counts only with { session: true }', async () => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    const api = await agent.request(`${app.origin}/api/me`);
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe('Bearer');
    const body = (await api.json()) as { error: string; message: string };
    expect(body.error).toBe('token_missing');
    expect(body.message).toMatch(
      /bearer access token only.*valid session cookie.*requireUser\(login, \{ session: true \}\)/,
    );
    // Without a session the message stays the generic one.
    expect(await (await fetch(`${app.origin}/api/me`)).json()).toEqual({
      error: 'token_missing',
      message: LOGIN_ERRORS.token_missing.message,
    });
  });

  it('sends a page visitor without a session to the login route and back (redirectToLogin)', async () => {
    const { app } = suite;
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
    const { app } = suite;
    const page = await fetch(`${app.origin}/page`, {
      headers: { authorization: 'Bearer not.a.token' },
      redirect: 'manual',
    });
    expect(page.status).toBe(401);
    expect(await page.json()).toMatchObject({ error: 'token_invalid' });
  });
}
