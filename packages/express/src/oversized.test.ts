import { createServer } from 'node:http';
import { serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import express from 'express';
// Until the lead exports it from the adapter suite's index (then: from '@kyb-webhooks/testing/adapter-suite').
import { runOversizedBodyCases } from '../../testing/src/adapter-suite/oversized.js';
import { kybWebhooks } from './index.js';

runOversizedBodyCases('express', (receiver) => {
  const app = express();
  app.all('/webhooks/kyb', kybWebhooks(receiver));
  return serveOnLoopback(createServer(app));
});
