/** Runs the example as a real server on 127.0.0.1 (see examples/shared/src/config.ts for the environment it reads). */
import { createApp } from './app.js';
import { port, receiverFromEnv } from '@kyb-webhooks/example-shared';

const app = await createApp(receiverFromEnv().receiver);
await app.listen({ port, host: '127.0.0.1' });
console.log(`KYB webhooks Fastify example listening on http://127.0.0.1:${port}/webhooks/kyb`);
