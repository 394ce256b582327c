import type { Receiver } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

/**
 * The example app. The plugin keeps its raw-body parser inside its own encapsulated context, so the webhook route
 * gets the exact bytes the signature covers while every other route parses JSON as usual.
 */
export async function createApp(receiver: Receiver): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(kybWebhooks, { receiver, path: '/webhooks/kyb' });
  app.get('/health', async () => ({ ok: true }));
  app.post('/echo', async (request) => ({ parsed: request.body })); // the rest of the app: JSON parsed normally
  return app;
}
