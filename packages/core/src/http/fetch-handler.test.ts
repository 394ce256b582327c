import { describe, expect, it } from 'vitest';
import {
  createTestSigner,
  runAdapterConformance,
  runAdapterOptionCases,
  serveFetchOnLoopback,
  testEvents,
} from '../../test-kit.js';
import { createFetchHandler } from './fetch-handler.js';
import { createReceiver } from '../receiver.js';

// Served over real HTTP through a minimal node:http → Request bridge, as Bun.serve or Deno.serve would call it (those
// runtimes run the same cases in the runtimes step: scripts/runtimes/run.mjs). Any method reaches the handler.
runAdapterConformance(
  'createFetchHandler on node:http',
  (receiver, options) => serveFetchOnLoopback(createFetchHandler(receiver, options)),
  {
    startAppWithBodyParser: (receiver) => {
      const handle = createFetchHandler(receiver);
      // A framework middleware that read the body as JSON first: the bytes that were signed are gone.
      return serveFetchOnLoopback(async (request) => {
        await request.json();
        return handle(request);
      });
    },
  },
);

runAdapterOptionCases('createFetchHandler (@kyb-webhooks/core)', (receiver, options) =>
  createFetchHandler(receiver, options),
);

describe('createFetchHandler without a server', () => {
  const url = 'http://localhost/webhooks/kyb';

  it('answers a delivery with the receiver JSON and Content-Type application/json; charset=utf-8', async () => {
    const signer = await createTestSigner();
    const handle = createFetchHandler(createReceiver({ secrets: { ...signer.secrets } }));
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const response = await handle(new Request(url, { method: 'POST', headers, body }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ received: true });
  });

  it('answers a GET with 405 and Allow: POST', async () => {
    const handle = createFetchHandler(createReceiver({ secrets: { '1': 'whsec_test' } }));
    const response = await handle(new Request(url));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
  });

  it('answers 500 body_already_parsed when something read the request body first', async () => {
    const signer = await createTestSigner();
    const handle = createFetchHandler(createReceiver({ secrets: { ...signer.secrets } }));
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const request = new Request(url, { method: 'POST', headers, body });
    await request.text();
    const response = await handle(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'body_already_parsed' } });
  });

  it('answers 500 body_already_parsed when something read part of the body and let go of the stream', async () => {
    const signer = await createTestSigner();
    const handle = createFetchHandler(createReceiver({ secrets: { ...signer.secrets } }));
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const request = new Request(url, { method: 'POST', headers, body });
    const reader = request.body!.getReader();
    await reader.read();
    reader.releaseLock(); // unlocked again, but what was read is gone
    const response = await handle(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'body_already_parsed' } });
  });

  it('refuses a body declared larger than maxBodyBytes + 4 MiB with 413 without reading it', async () => {
    const handle = createFetchHandler(createReceiver({ secrets: { '1': 'whsec_test' }, maxBodyBytes: 4096 }));
    const { stream, pulled } = endlessBody();
    const response = await handle(
      new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(4096 + 4 * 1024 * 1024 + 1) },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(pulled()).toBeLessThanOrEqual(1); // at most the chunk the stream pre-pulls on creation
  });

  it('refuses a streamed body without Content-Length once it passes maxBodyBytes, draining at most 4 MiB more', async () => {
    const handle = createFetchHandler(createReceiver({ secrets: { '1': 'whsec_test' }, maxBodyBytes: 4096 }));
    const { stream, pulled } = endlessBody();
    const response = await handle(
      new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'body_too_large' } });
    expect(pulled()).toBeLessThanOrEqual((4096 + 4 * 1024 * 1024) / 1024 + 2);
  });
});

/** A body that never ends, 1 KiB per pull, counting how often it was pulled. */
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
