import type { Receiver } from '@kyb-webhooks/core';
import {
  listenThenMount,
  listening,
  type ExampleLogin,
  type ServedApp,
  type ServedLoginApp,
} from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

/**
 * Starts the Koa example app on a free port of 127.0.0.1, for the demo and the stream scenario tests.
 *
 * @example
 * ```ts
 * const app = await serveApp(receiver)
 * service.setEndpoint({ url: app.url, secrets })
 * await app.close()
 * ```
 */
export function serveApp(receiver: Receiver): Promise<ServedApp> {
  return listening(createApp(receiver).listen(0, '127.0.0.1'));
}

/**
 * Starts the Koa example app with "Sign in with the service" on a free port of 127.0.0.1, for the login demo and its
 * tests: the server listens first, because the redirect URI registered at the login server holds its port.
 *
 * @example
 * ```ts
 * const app = await serveAppWithLogin(receiver, (origin) => loginFromEnv({ ...env, KYB_REDIRECT_URI: `${origin}/auth/callback` }))
 * ```
 */
export function serveAppWithLogin(
  receiver: Receiver,
  loginFor: (origin: string) => Promise<ExampleLogin>,
): Promise<ServedLoginApp> {
  return listenThenMount(loginFor, (server, login) => void server.on('request', createApp(receiver, login).callback()));
}
