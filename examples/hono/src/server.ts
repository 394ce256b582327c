/** Runs the example as a real server on 127.0.0.1 (see examples/shared/src/config.ts and login.ts for the environment it reads). */
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import { exitWith, loginFromEnv, port, exampleReceiver } from '@kyb-webhooks/example-shared';

const login = await loginFromEnv().catch(exitWith);
const { receiver } = await exampleReceiver().catch(exitWith); // --queue: queue mode, a worker in this process

serve({ fetch: createApp(receiver, login).fetch, port, hostname: '127.0.0.1' }, () => {
  console.log(`KYB webhooks Hono example listening on http://127.0.0.1:${port}/webhooks/kyb`);
  if (login) console.log(`Sign in with the service: http://127.0.0.1:${port}/`);
}).on('error', exitWith); // EADDRINUSE: a message and exit 1, not an unhandled 'error' event's stack
