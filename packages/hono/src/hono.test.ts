import { createAdaptorServer } from '@hono/node-server';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents, type TestSigner } from '@kyb-webhooks/testing';
import { runAdapterConformance, serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { IncomingMessage, Server } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

function serve(app: Hono) {
  return serveOnLoopback(createAdaptorServer({ fetch: app.fetch }) as Server);
}

// Mounted the documented way (README): app.all, so a GET reaches the adapter and gets 405 with Allow: POST.
runAdapterConformance(
  'hono on @hono/node-server',
  (receiver, options) => serve(new Hono().all('/webhooks/kyb', kybWebhooks(receiver, options))),
  {
    startAppWithBodyParser: (receiver) =>
      serve(
        new Hono()
          .use('/webhooks/kyb', async (c, next) => {
            if (c.req.method !== 'GET' && c.req.method !== 'HEAD') await c.req.json();
            await next();
          })
          .all('/webhooks/kyb', kybWebhooks(receiver)),
      ),
    startAppAfterAbort: (receiver, hooks) => {
      const webhooks = kybWebhooks(receiver);
      return serve(
        new Hono().all('/webhooks/kyb', async (c, next) => {
          // e.g. an async auth step, during which the sender goes away
          await hooks.before((c.env as { incoming: IncomingMessage }).incoming);
          try {
            const response = await webhooks(c, next);
            hooks.settled('resolved');
            return response;
          } catch {
            hooks.settled('rejected');
            return c.body(null, 500); // to nobody
          }
        }),
      );
    },
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

  it('on Workers, a handler past handlerTimeoutMs settles its claim through the execution context’s waitUntil', async () => {
    const slow = createReceiver({
      secrets: { ...signer.secrets },
      logger: false,
      handlerTimeoutMs: 40,
      storeTimeoutMs: 50,
      leaseMs: 60_000,
    });
    let finish!: () => void;
    const work = new Promise<void>((resolve) => {
      finish = resolve;
    });
    slow.on('kyb.data_request.refused', () => work);
    const workerApp = new Hono().post('/webhooks/kyb', kybWebhooks(slow));
    const handed: Promise<unknown>[] = [];
    const executionCtx = {
      waitUntil: (promise: Promise<unknown>) => void handed.push(promise),
      passThroughOnException: () => {},
      props: {},
    };
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const first = await workerApp.request('/webhooks/kyb', { method: 'POST', headers, body }, {}, executionCtx);
    expect([first.status, handed.length]).toEqual([503, 1]);
    finish();
    await handed[0];
    // Without a context (Node, Bun, Deno) there is nothing to hand over, and nothing fails.
    const retry = await workerApp.request('/webhooks/kyb', { method: 'POST', headers, body });
    expect(await retry.json()).toEqual({ received: true, code: 'duplicate' });
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

/** `bytes` as a stream of `size`-byte chunks: fetch sends it chunked, without Content-Length. */
function chunksOf(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, (offset += size)));
    },
  });
}

function withoutContentLength(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
}

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

describe('hono on @hono/node-server: the body straight from the Node request', () => {
  let signer: TestSigner;
  let receiver: Receiver;
  const handled: string[] = [];
  const apps: { url: string; close(): Promise<void> }[] = [];
  beforeAll(async () => {
    signer = await createTestSigner();
    receiver = createReceiver({ secrets: { ...signer.secrets } });
    receiver.onAny((event) => void handled.push(event.event_id));
    return async () => {
      await Promise.all(apps.map((app) => app.close()));
    };
  });

  // Several Node chunks and more than a Web stream buffers before it pauses its source, so two readers of one
  // Node request would stall or split it.
  function largeEnvelope() {
    const envelope = testEvents.dataRequestPendingApproval();
    return {
      ...envelope,
      data: { ...envelope.data, notes: Array.from({ length: 1500 }, (_, i) => `note ${i} `.repeat(8)) },
    };
  }

  async function post(
    app: Hono,
    envelope = testEvents.dataRequestPendingApproval(),
    { chunked = false } = {},
  ): Promise<{ status: number; body: unknown; eventId: string }> {
    const served = await serve(app);
    apps.push(served);
    const { headers, body } = await signer.sign(envelope);
    const init: RequestInit & { duplex?: 'half' } = chunked
      ? { body: chunksOf(body, 16 * 1024), duplex: 'half', headers: withoutContentLength(headers) }
      : { body, headers };
    const response = await fetch(served.url, { method: 'POST', ...init, signal: AbortSignal.timeout(5000) });
    return { status: response.status, body: await response.json(), eventId: envelope.event_id };
  }

  it('refuses a body a middleware read from c.req.raw, past Hono cache, instead of waiting for a stream already read', async () => {
    const app = new Hono()
      .use('/webhooks/kyb', async (c, next) => {
        await c.req.raw.arrayBuffer();
        await next();
      })
      .post('/webhooks/kyb', kybWebhooks(receiver));
    const answer = await post(app);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ error: { code: 'body_already_parsed' } });
    expect(handled).not.toContain(answer.eventId);
  });

  it('reads the Request stream a middleware opened but did not read, so its bytes go to one reader only', async () => {
    const app = new Hono()
      .use('/webhooks/kyb', async (c, next) => {
        expect(c.req.raw.body).not.toBeNull(); // builds the Request, whose Web stream pulls from the Node request
        await new Promise((resolve) => setTimeout(resolve, 20)); // long enough for that stream's first pull
        await next();
      })
      .post('/webhooks/kyb', kybWebhooks(receiver));
    const answer = await post(app, largeEnvelope());
    expect(answer.status).toBe(200);
    expect(handled.filter((id) => id === answer.eventId)).toHaveLength(1);
  });

  it("reads a chunked body through the request Hono's bodyLimit put in place of the Node one", async () => {
    const app = new Hono().post('/webhooks/kyb', bodyLimit({ maxSize: 1024 * 1024 }), kybWebhooks(receiver));
    const answer = await post(app, largeEnvelope(), { chunked: true });
    expect(answer.status).toBe(200);
    expect(handled.filter((id) => id === answer.eventId)).toHaveLength(1);
  });

  it('takes an env binding named incoming on other runtimes for what it is: not a Node request', async () => {
    const app = new Hono().post('/webhooks/kyb', kybWebhooks(receiver));
    const envelope = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(envelope);
    const response = await app.request(
      '/webhooks/kyb',
      { method: 'POST', headers, body },
      { incoming: { on: 'queue' } },
    );
    expect(response.status).toBe(200);
    expect(handled).toContain(envelope.event_id);
  });
});
