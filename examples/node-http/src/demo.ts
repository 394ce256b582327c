/** The demo for plain Node (`pnpm --filter @kyb-webhooks/example-node-http demo`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

await runDemo('Node http', serveApp);
