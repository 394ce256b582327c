import express from 'express';
import type { Receiver } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/express';

/**
 * The example app: the webhook route is mounted before express.json(), so it gets the raw bytes the signature
 * covers, while the rest of the app parses JSON as usual.
 */
export function createApp(receiver: Receiver): express.Express {
  const app = express();
  app.post('/webhooks/kyb', kybWebhooks(receiver));
  app.use(express.json());
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}
