import express from 'express';
import type { Receiver } from '@kyb-webhooks/core';
import type { ExampleLogin } from '@kyb-webhooks/example-shared';
import { kybWebhooks } from '@kyb-webhooks/express';
import { mountLogin } from './login.js';

/**
 * The example app: the webhook route is mounted before express.json(), so it gets the raw bytes the signature
 * covers, while the rest of the app parses JSON as usual. With `login` (see loginFromEnv), it also has "Sign in with
 * the service" (./login.ts).
 */
export function createApp(receiver: Receiver, login?: ExampleLogin): express.Express {
  const app = express();
  app.all('/webhooks/kyb', kybWebhooks(receiver)); // all methods: a GET gets 405 with Allow: POST, not a 404
  app.use(express.json());
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  if (login) mountLogin(app, login);
  return app;
}
