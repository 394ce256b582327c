// The exact edges of the oversized-body drain (issue 11, mutation survivors): a body declared at exactly
// maxBytes + maxBytesPastLimit is still drained, and the drain stops at exactly its budget, neither a byte early
// (the 413 would go out while the sender is still sending) nor a read late (it would wait on a sender that is done).
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { discardBodyStream, OVERSIZED_BODY_DRAIN, readWebBodyStream } from './body.js';

const TOO_LARGE = { ok: false, code: 'body_too_large' };

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

/** A Web stream that yields nothing until `push` is called. */
function manualWebStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }, { highWaterMark: 0 });
  return { stream, push: (bytes: number) => controller.enqueue(new Uint8Array(bytes)), close: () => controller.close() };
}

describe('discardBodyStream at the edges of its budget (maxBytes + maxBytesPastLimit)', () => {
  it('drains a body declared at exactly the budget instead of skipping it', async () => {
    const stream = new PassThrough();
    const drained = discardBodyStream(stream, { maxBytes: 100, declaredLength: 100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit });
    expect(await isSettled(drained)).toBe(false);
    stream.end(new Uint8Array(10));
    expect(await isSettled(drained)).toBe(true);
  });

  it('keeps draining after exactly the budget has arrived, until the sender is done or passes it', async () => {
    const stream = new PassThrough();
    const drained = discardBodyStream(stream, { maxBytes: 0 });
    stream.write(new Uint8Array(OVERSIZED_BODY_DRAIN.maxBytesPastLimit));
    expect(await isSettled(drained)).toBe(false);
    stream.end();
    expect(await isSettled(drained)).toBe(true);
  });
});

describe('readWebBodyStream at the edges of its drain', () => {
  it('drains a body declared at exactly maxBytes + maxBytesPastLimit before answering 413', async () => {
    const { stream, push } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100, declaredLength: 100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit });
    expect(await isSettled(read)).toBe(false);
    push(100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit);
    expect(await read).toEqual(TOO_LARGE);
  });

  it('answers 413 as soon as the declared length was drained, without waiting for one more read', async () => {
    const { stream, push } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100, declaredLength: 300 });
    push(300);
    // The stream stays open: a drain that asked for one more chunk would wait here until its 5 s timer.
    expect(await isSettled(read)).toBe(true);
    expect(await read).toEqual(TOO_LARGE);
  });
});
