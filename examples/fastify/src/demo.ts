/** The demo for Fastify (`npm run demo -- fastify`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

await runDemo('Fastify', serveApp);
