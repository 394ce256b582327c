/** Runs the example as a real server on 127.0.0.1; see examples/shared/src/config.ts for the environment it reads. */
import { exitWith, port, exampleReceiver } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

const { receiver } = await exampleReceiver().catch(exitWith); // --queue: queue mode, a worker in this process

createApp(receiver)
  .listen(port, '127.0.0.1', () => {
    console.log(`KYB webhooks plain Node example listening on http://127.0.0.1:${port}/webhooks/kyb`);
  })
  .on('error', exitWith); // EADDRINUSE: a message and exit 1, not an unhandled 'error' event's stack
