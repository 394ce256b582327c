import Fastify from 'fastify';
// Until the lead exports it from the adapter suite's index (then: from '@kyb-webhooks/testing/adapter-suite').
import { runOversizedBodyCases } from '../../testing/src/adapter-suite/oversized.js';
import { kybWebhooks } from './index.js';

runOversizedBodyCases('fastify', async (receiver) => {
  const app = Fastify();
  await app.register(kybWebhooks, { receiver, path: '/webhooks/kyb' });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${origin}/webhooks/kyb`, close: () => app.close() };
});
