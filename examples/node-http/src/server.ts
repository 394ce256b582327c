/** Runs the example as a real server on 127.0.0.1; see examples/shared/src/config.ts for the environment it reads. */
import { port, receiverFromEnv } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

createApp(receiverFromEnv().receiver).listen(port, '127.0.0.1', () => {
  console.log(`KYB webhooks plain Node example listening on http://127.0.0.1:${port}/webhooks/kyb`);
});
