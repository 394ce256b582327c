import type { Receiver } from '@kyb-webhooks/core';
import { listenThenMount, type ExampleLogin, type ServedApp, type ServedLoginApp } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

/**
 * Starts the Fastify example app on a free port of 127.0.0.1, for the demo and the stream scenario tests.
 *
 * @example
 * ```ts
 * const app = await serveApp(receiver)
 * service.setEndpoint({ url: app.url, secrets })
 * await app.close()
 * ```
 */
export async function serveApp(receiver: Receiver): Promise<ServedApp> {
  const app = await createApp(receiver);
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${origin}/webhooks/kyb`, close: () => app.close() };
}

/**
 * Starts the Fastify example app with "Sign in with the service" on a free port of 127.0.0.1, for the login demo and
 * its tests: the server listens first, because the redirect URI registered at the login server holds its port; the
 * app then takes its requests through `app.routing`.
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
  return listenThenMount(loginFor, async (server, login) => {
    const app = await createApp(receiver, login);
    await app.ready();
    server.on('request', app.routing);
    return () => app.close();
  });
}
