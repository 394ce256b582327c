import { createServer } from 'node:http';
import { createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { runAdapterConformance, serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import express, { type RequestHandler } from 'express';
import { expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

function start(receiver: Parameters<typeof kybWebhooks>[0], ...before: RequestHandler[]) {
  const app = express();
  for (const middleware of before) app.use(middleware);
  // all(), not post(): a GET reaches the adapter and gets the receiver's 405 with Allow: POST.
  app.all('/webhooks/kyb', kybWebhooks(receiver));
  return serveOnLoopback(createServer(app));
}

runAdapterConformance('express', (receiver) => start(receiver), {
  startAppWithBodyParser: (receiver) => start(receiver, express.json()),
});

it('express: accepts a delivery when express.raw() ran first (its Buffer holds the exact bytes)', async () => {
  const signer = await createTestSigner();
  const receiver = createReceiver({ secrets: { ...signer.secrets } });
  const handled: string[] = [];
  receiver.onAny((event) => void handled.push(event.event_id));
  const app = await start(receiver, express.raw({ type: 'application/json' }));
  try {
    const envelope = testEvents.dataRequestRefused({ data: { note: 'Zoë 🦊' } });
    const { headers, body } = await signer.sign(envelope);
    const response = await fetch(app.url, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(handled).toEqual([envelope.event_id]);
  } finally {
    await app.close();
  }
});
