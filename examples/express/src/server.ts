/** Runs the example as a real server on 127.0.0.1; see examples/shared/src/config.ts and login.ts for the environment it reads. */
import { exitWith, loginFromEnv, port, exampleReceiver } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

const login = await loginFromEnv().catch(exitWith);
const { receiver } = await exampleReceiver().catch(exitWith); // --queue: queue mode, a worker in this process
createApp(receiver, login).listen(port, '127.0.0.1', (error?: Error) => {
  if (error) exitWith(error); // Express 5 passes a listen error (EADDRINUSE) here instead of throwing it
  console.log(`KYB webhooks Express example listening on http://127.0.0.1:${port}/webhooks/kyb`);
  if (login) console.log(`Sign in with the service: http://127.0.0.1:${port}/`);
});
