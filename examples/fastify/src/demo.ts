/** The demo for Fastify (`npm run demo -- fastify`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

await runDemo('Fastify', async (receiver) => {
  const app = await createApp(receiver);
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${origin}/webhooks/kyb`, close: () => app.close() };
});
