import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressLogin from './express.js';
import * as honoLogin from './hono.js';
import { launchChromium, type LaunchedChromium } from './testing/chromium.js';
import { startApp, type MountApp, type RunningApp } from './testing/conformance.js';
import { TEST_ADDRESS } from './testing/provider.js';

// The whole sign-in in a real headless Chromium: the app's start route, the provider's login and consent pages
// clicked through, the callback, and the page that shows the user id; cookies kept by the browser itself.

const mounts: Array<[string, MountApp]> = [
  [
    'Express',
    (server, login, hooks) => {
      const app = express();
      const auth = expressLogin.loginHandlers(login, hooks);
      app.get('/auth/login', auth.start);
      app.get('/auth/callback', auth.callback);
      app.post('/auth/logout', auth.logout);
      app.get('/me', expressLogin.requireUser(login, { session: true }), (req, res) => void res.send(`<p id="user">${req.kybUser!.userId}</p>`));
      server.on('request', app);
    },
  ],
  [
    'Hono',
    (server, login, hooks) => {
      const app = new Hono<{ Variables: honoLogin.KybLoginVariables }>();
      const auth = honoLogin.loginHandlers(login, hooks);
      app.get('/auth/login', auth.start);
      app.get('/auth/callback', auth.callback);
      app.post('/auth/logout', auth.logout);
      app.get('/me', honoLogin.requireUser(login, { session: true }), (c) => c.html(`<p id="user">${c.get('kybUser').userId}</p>`));
      server.on('request', getRequestListener(app.fetch));
    },
  ],
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
      expect(await page.textContent('#user')).toBe(TEST_ADDRESS);
      expect(app.logins.at(-1)).toMatchObject({ userId: TEST_ADDRESS, tokens: { tokenType: 'bearer' } });

      const cookies = await browser.context.cookies(app.origin);
      const session = cookies.find((c) => c.name === 'kyb-login-session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(cookies.find((c) => c.name === 'kyb-login-tx')).toBeUndefined();

      // Signing out in the browser: the session is gone, /me is refused.
      await page.evaluate(() => fetch('/auth/logout', { method: 'POST' }).then((r) => r.status));
      const after = await page.goto(`${app.origin}/me`);
      expect(after?.status()).toBe(401);
    } finally {
      await page.close();
    }
  });
});
