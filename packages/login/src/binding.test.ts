import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mountExpress } from './testing/apps.js';
import { startApp, type RunningApp } from './testing/conformance/app.js';
import { approveAtProvider, UserAgent } from './testing/user-agent.js';

// The login binding counts the logins pending in a browser; one that finished leaves the count, the others stay in it.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp(mountExpress);
});
afterAll(() => app?.stop());

describe('the logins pending in one browser', () => {
  it('a login still pending after another finished keeps its place: five starts later it is the oldest, and cleared', async () => {
    const browser = new UserAgent();
    const finished = await browser.request(`${app.origin}/auth/login?returnTo=/finished`);
    const pending = await browser.request(`${app.origin}/auth/login?returnTo=/pending`);
    const pendingLocation = pending.headers.get('location')!;
    const back = await browser.request(await approveAtProvider(browser, finished.headers.get('location')!));
    expect([back.status, back.headers.get('location')]).toEqual([303, '/finished']);
    // Four more: with the pending one, five, the most a browser keeps. A fifth more makes room by clearing it.
    for (let i = 0; i < 5; i++) await (await browser.request(`${app.origin}/auth/login`)).body?.cancel();
    const late = await browser.request(await approveAtProvider(browser, pendingLocation));
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: 'state_mismatch' });
  });

  it('a callback in a browser that lost its binding cookie is refused, and clears only the login\u2019s own cookie', async () => {
    const browser = new UserAgent();
    const start = await browser.request(`${app.origin}/auth/login?returnTo=/back`);
    browser.cookies.delete('kyb-login-bind');
    const back = await browser.request(await approveAtProvider(browser, start.headers.get('location')!));
    expect(back.status).toBe(400);
    const setCookies = back.headers.getSetCookie();
    expect(setCookies.length).toBeGreaterThan(0);
    for (const cookie of setCookies) expect(cookie).toMatch(/^kyb-login-[a-z]+(-[A-Za-z0-9_-]+)?=[^;]*; Path=\//);
  });
  it('once an older login does not fit in the bytes left, every older one is cleared too: the survivors are the newest', async () => {
    const browser = new UserAgent();
    const path = (length: number): string => `/${'a'.repeat(length)}`;
    const small = await browser.request(`${app.origin}/auth/login?returnTo=/small`);
    const smallLocation = small.headers.get('location')!;
    // Then logins with ever longer return paths: at the last, the one with the 200-byte path no longer fits in the
    // bytes a Cookie header can carry, and the small one, older still, goes with it although it alone would fit.
    for (const length of [200, 500, 1023, 1023])
      await (await browser.request(`${app.origin}/auth/login?returnTo=${path(length)}`)).body?.cancel();
    const late = await browser.request(await approveAtProvider(browser, smallLocation));
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: 'state_mismatch' });
  });
  it('a login older than the transaction lifetime is no longer counted: its cookie is not cleared again', async () => {
    const browser = new UserAgent();
    const txNames = (answer: Response) =>
      answer.headers
        .getSetCookie()
        .map((cookie) => cookie.slice(0, cookie.indexOf('=')))
        .filter((name) => name.startsWith('kyb-login-tx-'));
    const old = await browser.request(`${app.origin}/auth/login?returnTo=/old`);
    const [oldName] = txNames(old);
    expect(oldName).toBeDefined();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // The default lifetime is 600 s: exactly then the browser has dropped the old login's cookie.
      vi.setSystemTime(Date.now() + 600_000);
      const cleared: string[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await browser.request(`${app.origin}/auth/login`);
        await answer.body?.cancel();
        cleared.push(...txNames(answer).filter((name) => name === oldName));
      }
      expect(cleared).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});
