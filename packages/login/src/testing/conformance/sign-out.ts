/**
 * Signing out: the session cookie cleared, the return path, and sign-outs sent from another site refused.
 */
import { expect, it } from 'vitest';
import type { ConformanceSuite } from './app.js';

export function signOutCases(suite: ConformanceSuite): void {
  it('signs out: the session cookie is cleared', async () => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
    const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, { method: 'POST' });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/bye');
    expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
  });

  it('signs out to a non-ASCII return path, percent-encoded', async () => {
    const { app } = suite;
    const out = await fetch(`${app.origin}/auth/logout?returnTo=/%C4%81`, { method: 'POST', redirect: 'manual' });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/%C4%81');
  });

  it.each<[string, Record<string, string>]>([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' }],
    ['an Origin of another site (no Sec-Fetch-Site)', { origin: 'http://evil.example' }],
    ['Origin: null (no Sec-Fetch-Site)', { origin: 'null' }],
  ])(
    'refuses a sign-out sent from another site (%s): 403 cross_site_request, the session kept',
    async (_name, headers) => {
      const { app } = suite;
      const { agent } = await suite.signedIn();
      const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, { method: 'POST', headers });
      expect(out.status).toBe(403);
      expect(await out.json()).toMatchObject({ error: 'cross_site_request' });
      expect(out.headers.getSetCookie()).toEqual([]);
      expect((await agent.request(`${app.origin}/me`)).status).toBe(200);
    },
  );

  it.each<[string, (origin: string) => Record<string, string>]>([
    ['Sec-Fetch-Site: same-origin', (origin) => ({ 'sec-fetch-site': 'same-origin', origin })],
    ['Sec-Fetch-Site: same-site', () => ({ 'sec-fetch-site': 'same-site', origin: 'http://www.127.0.0.1.example' })],
    ['this site\u2019s Origin (no Sec-Fetch-Site)', (origin) => ({ origin })],
  ])('signs out a request from this site (%s)', async (_name, headers) => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    const out = await agent.request(`${app.origin}/auth/logout`, { method: 'POST', headers: headers(app.origin) });
    expect(out.status).toBe(303);
    expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
  });

  it('signs out from an HTML form (an application/x-www-form-urlencoded body), with no body parser added', async () => {
    const { app } = suite;
    const { agent } = await suite.signedIn();
    const out = await agent.request(`${app.origin}/auth/logout?returnTo=/bye`, {
      method: 'POST',
      form: { submit: 'Sign out' },
    });
    expect([out.status, out.headers.get('location')]).toEqual([303, '/bye']);
    expect(out.headers.getSetCookie().some((c) => /^kyb-login-session=; /.test(c))).toBe(true);
    expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
  });
}
