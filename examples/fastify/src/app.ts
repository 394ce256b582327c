import type { Receiver } from '@kyb-webhooks/core';
import type { ExampleLogin } from '@kyb-webhooks/example-shared';
import { kybWebhooks } from '@kyb-webhooks/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { mountLogin } from './login.js';

/**
 * The example app. The plugin keeps its raw-body parser inside its own encapsulated context, so the webhook route
 * gets the exact bytes the signature covers while every other route parses JSON as usual. With `login` (see
 * loginFromEnv), it also has "Sign in with the service" (./login.ts).
 */
export async function createApp(receiver: Receiver, login?: ExampleLogin): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(kybWebhooks, { receiver, path: '/webhooks/kyb' });
  app.get('/health', async () => ({ ok: true }));
  app.post('/echo', async (request) => ({ parsed: request.body })); // the rest of the app: JSON parsed normally
  if (login) await mountLogin(app, login);
  return app;
}
