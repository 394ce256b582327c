import type { Receiver } from '@kyb-webhooks/core';
import type { ExampleLogin } from '@kyb-webhooks/example-shared';
import { kybWebhooks } from '@kyb-webhooks/hono';
import { Hono } from 'hono';
import { loginRoutes } from './login.js';

/**
 * The example app. Nothing here is Node-specific: the same app runs on Bun, Deno or Workers by exporting
 * `app.fetch`; `server.ts` serves it on Node through @hono/node-server. With `login` (see loginFromEnv), it also
 * has "Sign in with the service" (./login.ts).
 */
export function createApp(receiver: Receiver, login?: ExampleLogin): Hono {
  const app = new Hono();
  app.all('/webhooks/kyb', kybWebhooks(receiver)); // a GET gets 405 with Allow: POST
  app.get('/health', (c) => c.json({ ok: true }));
  if (login) app.route('/', loginRoutes(login));
  return app;
}
