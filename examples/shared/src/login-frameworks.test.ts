import { LOGIN_TEST_ADDRESS } from '@kyb-webhooks/login/testing';
import { describe, expect, it } from 'vitest';
import { serveAppWithLogin as serveExpress } from '../../express/src/serve.js';
import { serveAppWithLogin as serveFastify } from '../../fastify/src/serve.js';
import { serveAppWithLogin as serveHono } from '../../hono/src/serve.js';
import { serveAppWithLogin as serveKoa } from '../../koa/src/serve.js';
import { runLoginDemo } from './login-demo.js';

// "Sign in with the service" on each framework's example, end to end over HTTP: the example app configured from the
// same environment variables as `pnpm start`, a local oidc-provider configured like the service, a browser's requests.
describe.each([
  ['Express', serveExpress],
  ['Fastify', serveFastify],
  ['Koa', serveKoa],
  ['Hono', serveHono],
] as const)('Sign in with the service on the %s example', (framework, serve) => {
  it('signs in from the home page link and shows the user id on the account page, then signs out', async () => {
    const { rows, userId } = await runLoginDemo(framework, serve, { print: () => {} });
    expect(rows.map((row) => [row.request.trim(), row.status])).toEqual([
      ['GET  /', 200],
      ['GET  /auth/login?returnTo=/account', 302],
      ['login server', null],
      ['GET  /auth/callback', 303],
      ['GET  /account', 200],
      ['POST /auth/logout', 303],
      ['GET  /account', 401],
    ]);
    expect(rows[1]!.what).toBe(
      "to the login server's /oauth2/auth: PKCE S256, state, nonce, prompt=consent, access_type=offline, audience",
    );
    expect(rows[3]!.what).toBe(
      `code exchanged (HTTP Basic), ID token verified, signed up: ${LOGIN_TEST_ADDRESS}; to /account`,
    );
    expect(rows[6]!.what).toBe('signed out: token_missing');
    expect(userId).toBe(LOGIN_TEST_ADDRESS);
  });

  it('shows the id of the address that approved the sign-in', async () => {
    const address = '0x1111111111111111111111111111111111111111';
    const { userId } = await runLoginDemo(framework, serve, { address, print: () => {} });
    expect(userId).toBe(address);
  });
});
