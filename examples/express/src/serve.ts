import type { Receiver } from '@kyb-webhooks/core';
import { listening, type ServedApp } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

/**
 * Starts the Express example app on a free port of 127.0.0.1, for the demo and the stream scenario tests.
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
