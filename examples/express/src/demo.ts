/** The README's demo (`npm run demo`): the Express example app, the scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

await runDemo('Express', serveApp);
