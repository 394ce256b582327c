import type { Receiver } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/hono';
import { Hono } from 'hono';

/**
 * The example app. Nothing here is Node-specific: the same app runs on Bun, Deno or Workers by exporting
 * `app.fetch`; `server.ts` serves it on Node through @hono/node-server.
 */
export function createApp(receiver: Receiver): Hono {
  const app = new Hono();
  app.post('/webhooks/kyb', kybWebhooks(receiver));
  app.get('/health', (c) => c.json({ ok: true }));
  return app;
}
