import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountExpress, mountFastify, mountHono, mountKoa } from './testing/apps.js';
import { launchChromium, type LaunchedChromium } from './testing/chromium.js';
import { startApp, type MountApp, type RunningApp } from './testing/conformance.js';
import { TEST_ADDRESS } from './testing/provider.js';

// The whole sign-in in a real headless Chromium, on every framework: the app's start route, the provider's login and
// consent pages clicked through, the callback, and the page that shows the user id; cookies kept by the browser.

const mounts: Array<[string, MountApp]> = [
  ['Express', mountExpress],
  ['Fastify', mountFastify],
  ['Koa', mountKoa],
  ['Hono', mountHono],
];

let browser: LaunchedChromium | undefined;
let unavailable: string | undefined;
beforeAll(async () => {
  const launched = await launchChromium();
  if ('reason' in launched) unavailable = launched.reason;
  else browser = launched;
});
afterAll(() => browser?.close());

describe.each(mounts)('sign-in in headless Chromium on %s', (_name, mount) => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp(mount);
  });
  afterAll(() => app?.stop());

  it('clicks through the provider and lands on the page that shows the user id', async (ctx) => {
    if (!browser) {
      console.warn(`[login browser test] skipped: ${unavailable}`);
      return ctx.skip();
    }
    const page = await browser.context.newPage();
    try {
      await page.goto(`${app.origin}/auth/login?returnTo=/me`);
      await page.waitForSelector('#address'); // the provider's login page (the QR page's stand-in)
      await Promise.all([page.waitForSelector('#scopes'), page.click('#submit')]);
      await Promise.all([page.waitForURL(`${app.origin}/me`), page.click('#submit')]); // consent
      expect(JSON.parse((await page.textContent('body'))!)).toEqual({ userId: TEST_ADDRESS, via: 'session' });
      expect(app.logins.at(-1)).toMatchObject({ userId: TEST_ADDRESS, tokens: { tokenType: 'bearer' } });

      const cookies = await browser.context.cookies(app.origin);
      const session = cookies.find((c) => c.name === 'kyb-login-session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(cookies.find((c) => c.name.startsWith('kyb-login-tx'))).toBeUndefined();

      // Signing out in the browser: the session is gone, /me is refused.
      await page.evaluate(() => fetch('/auth/logout', { method: 'POST' }).then((r) => r.status));
      const after = await page.goto(`${app.origin}/me`);
      expect(after?.status()).toBe(401);
    } finally {
      await page.close();
    }
  });
});
