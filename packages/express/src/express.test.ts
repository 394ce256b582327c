import { createServer } from 'node:http';
import { createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { runAdapterConformance, serveOnLoopback, type AdapterTestOptions } from '@kyb-webhooks/testing/adapter-suite';
import express, { type RequestHandler } from 'express';
import { expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

function start(
  receiver: Parameters<typeof kybWebhooks>[0],
  options: AdapterTestOptions = {},
  ...before: RequestHandler[]
) {
  const app = express();
  for (const middleware of before) app.use(middleware);
  // all(), not post(): a GET reaches the adapter and gets the receiver's 405 with Allow: POST.
  app.all('/webhooks/kyb', kybWebhooks(receiver, options));
  return serveOnLoopback(createServer(app));
}

runAdapterConformance('express', (receiver, options) => start(receiver, options), {
  startAppWithBodyParser: (receiver) => start(receiver, {}, express.json()),
  startAppAfterAbort: (receiver, hooks) => {
    const app = express();
    app.use(async (req, _res, next) => {
      await hooks.before(req); // e.g. an async auth step, during which the sender goes away
      next();
    });
    const webhooks = kybWebhooks(receiver);
    app.all('/webhooks/kyb', (req, res, next) => {
      res.once('finish', () => hooks.settled('answered'));
      webhooks(req, res, next);
    });
    app.use((_error: unknown, req: express.Request, _res: express.Response, _next: express.NextFunction) => {
      hooks.settled('next(error)');
      req.destroy();
    });
    return serveOnLoopback(createServer(app));
  },
});

it('express: accepts a delivery when express.raw() ran first (its Buffer holds the exact bytes)', async () => {
  const signer = await createTestSigner();
  const receiver = createReceiver({ secrets: { ...signer.secrets } });
  const handled: string[] = [];
  receiver.onAny((event) => void handled.push(event.event_id));
  const app = await start(receiver, {}, express.raw({ type: 'application/json' }));
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

it('express: answers JSON without an ETag and keeps headers earlier middleware set', async () => {
  const signer = await createTestSigner();
  const receiver = createReceiver({ secrets: { ...signer.secrets } });
  const app = await start(receiver, {}, (_req, res, next) => {
    res.setHeader('x-request-id', 'abc-123');
    next();
  });
  try {
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const response = await fetch(app.url, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('x-request-id')).toBe('abc-123');
    const text = await response.text();
    expect(response.headers.get('content-length')).toBe(String(new TextEncoder().encode(text).byteLength));
    expect(JSON.parse(text)).toEqual({ received: true });
  } finally {
    await app.close();
  }
});
