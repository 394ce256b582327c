/**
 * Several logins pending in one browser (tabs signing in at once, or abandoned): each can finish, and their cookies never
 * outgrow what a server reads.
 */
import { expect, it } from 'vitest';
import { approveAtProvider, UserAgent } from '../user-agent.js';
import type { ConformanceSuite } from './app.js';

export function pendingLoginCases(suite: ConformanceSuite): void {
  it('lets two logins started in one browser both finish, in either order', async () => {
    const { app } = suite;
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
    const { app } = suite;
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
    const { app } = suite;
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
    const { app } = suite;
    const browser = new UserAgent();
    // A page that sends the browser to the start route again and again (or tabs left mid-login), each time with
    // the longest return path: before, the cookies outgrew the server's header limit and the user was locked out.
    const longest = `/${'a'.repeat(1023)}`;
    for (let i = 0; i < 9; i++)
      await (await browser.request(`${app.origin}/auth/login?returnTo=${longest}`)).body?.cancel();
    const last = await browser.request(`${app.origin}/auth/login?returnTo=/last`);
    const cookies = [...browser.cookies].filter(([name]) => name.startsWith('kyb-login-'));
    expect(cookies.map(([name, value]) => `${name}=${value}`).join('; ').length).toBeLessThan(8192 - 1024);
    const back = await browser.request(await approveAtProvider(browser, last.headers.get('location')!));
    expect([back.status, back.headers.get('location')]).toEqual([303, '/last']);
    expect((await browser.request(`${app.origin}/me`)).status).toBe(200);
  });
}
