/** The README's demo (`npm run demo`): the Express example app, the scenario and its table. */
import { listening, runDemo } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

await runDemo('Express', (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')));
