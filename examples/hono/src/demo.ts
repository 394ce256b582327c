/** The demo for Hono on Node (`npm run demo -- hono`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

await runDemo('Hono', serveApp);
