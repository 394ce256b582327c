/**
 * Transaction cookies that are not this browser's, refused on the callback by the binding cookie (src/binding.ts): one
 * planted by a sibling subdomain (cookie tossing), and one moved under another pending login's name.
 */
import { expect, it } from 'vitest';
import { approveAtProvider, UserAgent } from '../user-agent.js';
import type { ConformanceSuite, RunningApp } from './app.js';

export function bindingCases(suite: ConformanceSuite): void {
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
  ])(
    'refuses a transaction cookie planted in %s (cookie tossing by a sibling subdomain): 400 state_mismatch, no session',
    async (_name, victimOf) => {
      const { app } = suite;
      // The attacker starts a login in their own browser, approves it as themselves, and keeps the callback unused.
      const attacker = new UserAgent();
      const start = await attacker.request(`${app.origin}/auth/login`);
      const attackerCallback = await approveAtProvider(
        attacker,
        start.headers.get('location')!,
        '0x1111111111111111111111111111111111111111',
      );
      const [name, value] = suite.transactionCookie(attacker);
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
    },
  );

  it('refuses a transaction cookie moved under another login\u2019s name, without using up that login', async () => {
    const { app } = suite;
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
}
