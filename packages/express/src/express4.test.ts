import { createServer } from 'node:http';
import { runAdapterConformance, serveOnLoopback, type AdapterTestOptions } from '@kyb-webhooks/testing/adapter-suite';
// Express 4 stays supported (peer range ^4.21 || ^5): the same suite runs against it.
import express4 from 'express4';
import type { RequestHandler } from 'express';
import { kybWebhooks } from './index.js';

function start(receiver: Parameters<typeof kybWebhooks>[0], options: AdapterTestOptions = {}, ...before: unknown[]) {
  const app = express4();
  for (const middleware of before) app.use(middleware as never);
  app.all('/webhooks/kyb', kybWebhooks(receiver, options) as unknown as Parameters<typeof app.all>[1]);
  return serveOnLoopback(createServer(app));
}

runAdapterConformance('express 4', (receiver, options) => start(receiver, options), {
  startAppWithBodyParser: (receiver) => start(receiver, {}, express4.json() as unknown as RequestHandler),
});
