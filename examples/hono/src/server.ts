/** Runs the example as a real server on 127.0.0.1 (see examples/shared/src/config.ts for the environment it reads). */
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import { port, receiverFromEnv } from '@kyb-webhooks/example-shared';

serve({ fetch: createApp(receiverFromEnv().receiver).fetch, port, hostname: '127.0.0.1' }, () => {
  console.log(`KYB webhooks Hono example listening on http://127.0.0.1:${port}/webhooks/kyb`);
});
