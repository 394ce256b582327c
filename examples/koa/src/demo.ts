/** The demo for Koa (`npm run demo -- koa`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

await runDemo('Koa', serveApp);
