/** Runs the example as a real server on 127.0.0.1 (see examples/shared/src/config.ts and login.ts for the environment it reads). */
import { createApp } from './app.js';
import { exitWith, loginFromEnv, port, exampleReceiver } from '@kyb-webhooks/example-shared';

const login = await loginFromEnv().catch(exitWith);
const { receiver } = await exampleReceiver().catch(exitWith); // --queue: queue mode, a worker in this process
const app = await createApp(receiver, login);
await app.listen({ port, host: '127.0.0.1' }).catch(exitWith);
console.log(`KYB webhooks Fastify example listening on http://127.0.0.1:${port}/webhooks/kyb`);
if (login) console.log(`Sign in with the service: http://127.0.0.1:${port}/`);
