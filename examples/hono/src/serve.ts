import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Receiver } from '@kyb-webhooks/core';
import { listening, type ServedApp } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

/**
 * Starts the Hono example app on Node (through @hono/node-server) on a free port of 127.0.0.1, for the demo and the
 * stream scenario tests.
 *
 * @example
 * ```ts
 * const app = await serveApp(receiver)
 * service.setEndpoint({ url: app.url, secrets })
 * await app.close()
 * ```
 */
export function serveApp(receiver: Receiver): Promise<ServedApp> {
  return listening(serve({ fetch: createApp(receiver).fetch, port: 0, hostname: '127.0.0.1' }) as Server);
}
