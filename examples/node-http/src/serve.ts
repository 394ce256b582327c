import type { Receiver } from '@kyb-webhooks/core';
import { listening, type ServedApp } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

/**
 * Starts the plain Node example app on a free port of 127.0.0.1, for the demo and its test.
 *
 * @example
 * ```ts
 * const app = await serveApp(receiver)
 * await app.close()
 * ```
 */
export function serveApp(receiver: Receiver): Promise<ServedApp> {
  return listening(createApp(receiver).listen(0, '127.0.0.1'));
}
