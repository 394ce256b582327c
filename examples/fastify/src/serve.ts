import type { Receiver } from '@kyb-webhooks/core';
import type { ServedApp } from '@kyb-webhooks/example-shared';
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
