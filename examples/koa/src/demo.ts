/** The demo for Koa (`npm run demo -- koa`): the example app, the shared scenario and its table. */
import { listening, runDemo } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

await runDemo('Koa', (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')));
