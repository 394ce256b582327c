import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapter, toAdapterResponse } from './adapter-core.js';
import { receiveDelivery, type BodySource } from './body-source.js';
import { OVERSIZED_BODY_DRAIN } from './body.js';
import { createTestSigner, testEvents } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';

const receiver = createReceiver({ secrets: { '1': 'whsec_test' }, maxBodyBytes: 16 });
const headers = { 'content-type': 'application/json' };

describe('receiveDelivery: the body-limit policy every entry point shares', () => {
  it.each([
    ['bytes over maxBodyBytes', { kind: 'bytes', bytes: new Uint8Array(17) }, 413, 'body_too_large'],
    ['a parsed body', { kind: 'parsed' }, 500, 'body_already_parsed'],
    ['no Web body at all (null), read as zero bytes', { kind: 'web-stream', stream: null }, 401, 'signature_missing'],
  ] as const)('answers %s like the receiver answers those bytes', async (_name, body, status, code) => {
    const result = await receiveDelivery(receiver, { method: 'POST', headers, body });
    expect([result.status, result.code]).toEqual([status, code]);
  });

  it('answers a locked Web stream (someone else is reading it) with 500 body_already_parsed', async () => {
    const stream = new ReadableStream<Uint8Array>();
    stream.getReader();
    const result = await receiveDelivery(receiver, { method: 'POST', headers, body: { kind: 'web-stream', stream } });
    expect([result.status, result.code]).toEqual([500, 'body_already_parsed']);
  });

  it('drains what is left of a body the framework refused, then answers 413 body_too_large', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'refused-too-large', stream, maxBytes: 16, declaredLength: 64 },
    });
    stream.end(new Uint8Array(64));
    const result = await pending;
    expect([result.status, result.code]).toEqual([413, 'body_too_large']);
    expect(stream.readableEnded).toBe(true);
  });

  it('answers a refused body at once when its stream already ended', async () => {
    const stream = new PassThrough();
    stream.resume();
    stream.end();
    await new Promise((resolve) => stream.once('end', resolve));
    const result = await receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'refused-too-large', stream, maxBytes: 16 },
    });
    expect(result.status).toBe(413);
  });

  it('reads a Node stream within maxBodyBytes and refuses one past it with 413', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, { method: 'POST', headers, body: { kind: 'stream', stream } });
    stream.end(new Uint8Array(32));
    expect((await pending).status).toBe(413);
  });
});

/** Whether `promise` has settled after pending I/O callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** One past what a drain reads beyond `maxBodyBytes` (16 here): a body declared this long is answered unread. */
const PAST_DRAIN = String(16 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit + 1);

describe('receiveDelivery: Node streams, within and past the limit', () => {
  it('hands a streamed body within maxBodyBytes to the receiver with the method and headers', async () => {
    const signer = await createTestSigner();
    const signed = await signer.sign(testEvents.dataRequestRefused());
    const stream = new PassThrough();
    const pending = receiveDelivery(createReceiver({ secrets: { ...signer.secrets } }), {
      method: 'POST',
      headers: signed.headers,
      body: { kind: 'stream', stream, declaredLength: String(Buffer.byteLength(signed.body)) },
    });
    stream.end(signed.body);
    const result = await pending;
    expect([result.status, result.body]).toEqual([200, { received: true }]);
  });

  it('answers a stream declared over maxBodyBytes + maxBytesPastLimit with 413 at once, without reading it', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'stream', stream, declaredLength: PAST_DRAIN },
    });
    expect(await isSettled(pending)).toBe(true);
    expect([(await pending).status, (await pending).code]).toEqual([413, 'body_too_large']);
    expect(stream.readableFlowing).toBeNull(); // never switched to reading
  });
});

describe('receiveDelivery: the method is checked first, whatever the body (step 1)', () => {
  const webStream = (bytes: number) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(bytes));
        controller.close();
      },
    });

  it.each<[string, () => BodySource]>([
    ['bytes over maxBodyBytes', () => ({ kind: 'bytes', bytes: new Uint8Array(17) })],
    ['a parsed body', () => ({ kind: 'parsed' })],
    ['a Web stream over maxBodyBytes', () => ({ kind: 'web-stream', stream: webStream(64) })],
    ['a refused body', () => ({ kind: 'refused-too-large', maxBytes: 16 })],
  ])('answers a GET with %s 405 method_not_allowed and Allow: POST', async (_name, body) => {
    const result = await receiveDelivery(receiver, { method: 'GET', headers, body: body() });
    expect([result.status, result.code, result.headers]).toEqual([405, 'method_not_allowed', { allow: 'POST' }]);
  });

  it('drains a Node stream over maxBodyBytes without keeping it, then answers 405 (not 413)', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, {
      method: 'delete',
      headers,
      body: { kind: 'stream', stream, declaredLength: 64 },
    });
    stream.end(new Uint8Array(64));
    const result = await pending;
    expect([result.status, result.code]).toEqual([405, 'method_not_allowed']);
    expect(stream.readableEnded).toBe(true);
  });

  it('answers 405 at once, without reading, a Node stream declared past what a drain reads', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, {
      method: 'PUT',
      headers,
      body: { kind: 'stream', stream, declaredLength: PAST_DRAIN },
    });
    expect(await isSettled(pending)).toBe(true);
    expect((await pending).status).toBe(405);
    expect(stream.readableFlowing).toBeNull();
  });
});

describe('receiveDelivery: a body the framework refused for its size', () => {
  it('answers 413 body_too_large when there is no stream left to drain', async () => {
    const result = await receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'refused-too-large', maxBytes: 16, declaredLength: 64 },
    });
    expect([result.status, result.code]).toEqual([413, 'body_too_large']);
  });

  it('answers at once, without reading, when the declared length is past what a drain reads', async () => {
    const stream = new PassThrough();
    const pending = receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'refused-too-large', stream, maxBytes: 16, declaredLength: PAST_DRAIN },
    });
    expect(await isSettled(pending)).toBe(true);
    expect((await pending).status).toBe(413);
    expect(stream.readableFlowing).toBeNull();
  });

  it('drains at most maxBytesPastLimit more when the framework already read past the limit', async () => {
    const stream = new PassThrough();
    stream.write(new Uint8Array(32));
    stream.read(); // what the framework read before it refused the body
    const pending = receiveDelivery(receiver, {
      method: 'POST',
      headers,
      body: { kind: 'refused-too-large', stream, maxBytes: 16, declaredLength: 64 },
    });
    stream.write(new Uint8Array(OVERSIZED_BODY_DRAIN.maxBytesPastLimit));
    expect(await isSettled(pending)).toBe(false);
    stream.write(new Uint8Array(1)); // the sender goes on: the 413 goes out without waiting for the end
    expect(await isSettled(pending)).toBe(true);
    expect((await pending).status).toBe(413);
  });
});

describe('toAdapterResponse', () => {
  it('adds Content-Type to the result headers and serialises the body', () => {
    const response = toAdapterResponse(receiver.reject('method_not_allowed'));
    expect(response.status).toBe(405);
    expect(response.headers).toEqual({ allow: 'POST', 'content-type': 'application/json; charset=utf-8' });
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'method_not_allowed' } });
  });

  it('gives every answer its own headers object, which a server may write into', () => {
    const first = toAdapterResponse(receiver.reject('body_too_large'));
    const second = toAdapterResponse(receiver.reject('body_too_large'));
    expect(first.headers).not.toBe(second.headers);
    first.headers['content-length'] = '2';
    expect(second.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
  });
});

describe('createAdapter: the onResult hook', () => {
  const map = {
    method: () => 'POST',
    headers: () => headers,
    body: () => ({ kind: 'parsed' as const }),
    respond: (_res: undefined, response: { status: number }) => response.status,
  };

  it('calls onResult once with the result and the request, before the answer is written', async () => {
    const seen: unknown[] = [];
    const deliver = createAdapter<string, undefined, number>(
      receiver,
      { onResult: (result, req) => void seen.push([result.code, req]) },
      map,
    );
    expect(await deliver('the request', undefined)).toBe(500);
    expect(seen).toEqual([['body_already_parsed', 'the request']]);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('metrics down');
      },
    ],
    ['rejects', () => Promise.reject(new Error('metrics down'))],
  ])('keeps the answer when onResult %s', async (_name, onResult) => {
    const deliver = createAdapter<string, undefined, number>(receiver, { onResult }, map);
    expect(await deliver('the request', undefined)).toBe(500);
  });

  it('awaits a body accessor that returns a promise', async () => {
    const deliver = createAdapter<string, undefined, number>(
      receiver,
      {},
      { ...map, body: async () => ({ kind: 'bytes' as const, bytes: new Uint8Array(17) }) },
    );
    expect(await deliver('the request', undefined)).toBe(413);
  });
});
