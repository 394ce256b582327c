import { createAdaptorServer } from '@hono/node-server';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents, type TestSigner } from '@kyb-webhooks/testing';
import { runAdapterConformance, serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

function serve(app: Hono) {
  return serveOnLoopback(createAdaptorServer({ fetch: app.fetch }) as Server);
}

// Mounted the documented way, for POST only: a GET gets Hono's own 404 (the suite's 'post-only' mode).
runAdapterConformance(
  'hono on @hono/node-server',
  (receiver, options) => serve(new Hono().post('/webhooks/kyb', kybWebhooks(receiver, options))),
  {
    mountedOn: 'post-only',
    startAppWithBodyParser: (receiver) =>
      serve(
        new Hono()
          .use('/webhooks/kyb', async (c, next) => {
            await c.req.json();
            await next();
          })
          .post('/webhooks/kyb', kybWebhooks(receiver)),
      ),
  },
);

describe('hono specifics: the Web-standard path, app.request() without a server', () => {
  let signer: TestSigner;
  let receiver: Receiver;
  let app: Hono;
  const handled: string[] = [];
  beforeAll(async () => {
    signer = await createTestSigner();
    receiver = createReceiver({ secrets: { ...signer.secrets }, maxBodyBytes: 4096 });
    receiver.onAny((event) => void handled.push(event.event_id));
    app = new Hono();
    app.all('/webhooks/kyb', kybWebhooks(receiver));
    app.post('/parsed-first', async (c, next) => {
      await c.req.text();
      return kybWebhooks(receiver)(c, next);
    });
    app.post('/bytes-first', async (c, next) => {
      await c.req.arrayBuffer(); // cached raw bytes are the signed bytes
      return kybWebhooks(receiver)(c, next);
    });
  });

  it('accepts a delivery, then acknowledges it as a duplicate', async () => {
    const envelope = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(envelope);
    const first = await app.request('/webhooks/kyb', { method: 'POST', headers, body });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await first.json()).toEqual({ received: true });
    const again = await app.request('/webhooks/kyb', { method: 'POST', headers, body });
    expect(await again.json()).toMatchObject({ received: true, code: 'duplicate' });
    expect(handled.filter((id) => id === envelope.event_id)).toHaveLength(1);
  });

  it('answers 405 with Allow: POST when mounted for every method', async () => {
    const response = await app.request('/webhooks/kyb', { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('refuses an oversized body from its Content-Length, reading and dropping no more than the declared length', async () => {
    const { stream, pulled } = endlessBody();
    const request = new Request('http://localhost/webhooks/kyb', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100000' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await app.request(request);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'body_too_large' } });
    // Drained before the answer (so a real connection closes cleanly), 1 KiB per pull, plus the pre-pulled chunk.
    expect(pulled()).toBeLessThanOrEqual(Math.ceil(100_000 / 1024) + 1);
  });

  it('refuses a body declared larger than maxBodyBytes + 4 MiB without reading it', async () => {
    const { stream, pulled } = endlessBody();
    const request = new Request('http://localhost/webhooks/kyb', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(4096 + 4 * 1024 * 1024 + 1) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await app.request(request);
    expect(response.status).toBe(413);
    expect(pulled()).toBeLessThanOrEqual(1); // at most the chunk the stream pre-pulls on creation
  });

  it('refuses a streamed body without Content-Length once it passes maxBodyBytes, draining at most 4 MiB more', async () => {
    const { stream, pulled } = endlessBody();
    const request = new Request('http://localhost/webhooks/kyb', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await app.request(request);
    expect(response.status).toBe(413);
    // An endless body, kept up to maxBodyBytes and then drained up to 4 MiB more (1 KiB per pull), never to its end.
    expect(pulled()).toBeLessThanOrEqual((4096 + 4 * 1024 * 1024) / 1024 + 2);
  });

  it('refuses a body a middleware read as text, accepts one it read as raw bytes', async () => {
    for (const [path, status] of [
      ['/parsed-first', 500],
      ['/bytes-first', 200],
    ] as const) {
      const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
      const response = await app.request(path, { method: 'POST', headers, body });
      expect(response.status).toBe(status);
    }
  });
});

/** A body that never ends, 1 KiB per pull, counting how often the adapter pulled. */
function endlessBody(): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls += 1;
      controller.enqueue(new Uint8Array(1024));
    },
  });
  return { stream, pulled: () => pulls };
}
