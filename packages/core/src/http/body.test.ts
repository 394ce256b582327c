import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { discardBodyStream, OVERSIZED_BODY_DRAIN, readBodyStream, readWebBodyStream } from './body.js';

const MiB = 1024 * 1024;
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

/** A Web stream that yields nothing until `push` is called, and counts its bytes read. */
function manualWebStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }, { highWaterMark: 0 });
  return {
    stream,
    push: (bytes: number) => controller.enqueue(new Uint8Array(bytes)),
    close: () => controller.close(),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('oversized bodies are drained before the 413, within bounds (Node streams)', () => {
  it('readBodyStream answers a declared-oversized body only once the rest of it was read', async () => {
    const stream = new PassThrough();
    const read = readBodyStream(stream, { maxBytes: 100, declaredLength: 300 });
    stream.write(new Uint8Array(200));
    expect(await isSettled(read)).toBe(false);
    stream.end(new Uint8Array(100));
    expect(await read).toEqual(TOO_LARGE);
  });

  it('readBodyStream answers a body that passes maxBytes while streaming only once the rest of it was read', async () => {
    const stream = new PassThrough();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.write(new Uint8Array(150));
    expect(await isSettled(read)).toBe(false);
    stream.end(new Uint8Array(100));
    expect(await read).toEqual(TOO_LARGE);
  });

  it('readBodyStream keeps answering 413 when the sender goes away during the drain', async () => {
    const stream = new PassThrough();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.write(new Uint8Array(150));
    await isSettled(read);
    stream.destroy(new Error('aborted'));
    expect(await read).toEqual(TOO_LARGE);
  });

  it('discardBodyStream does not read a body declared over maxBytes + maxBytesPastLimit', async () => {
    const stream = new PassThrough();
    await discardBodyStream(stream, {
      maxBytes: MiB,
      declaredLength: MiB + OVERSIZED_BODY_DRAIN.maxBytesPastLimit + 1,
    });
    expect(stream.readableFlowing).toBeNull(); // never switched to reading
  });

  it('discardBodyStream stops after maxBytes + maxBytesPastLimit bytes of a body that goes on', async () => {
    const stream = new PassThrough();
    const drained = discardBodyStream(stream, { maxBytes: 100 });
    stream.write(new Uint8Array(OVERSIZED_BODY_DRAIN.maxBytesPastLimit));
    expect(await isSettled(drained)).toBe(false);
    stream.write(new Uint8Array(101));
    expect(await isSettled(drained)).toBe(true);
  });

  it('discardBodyStream gives up after maxMs on a sender that stops sending', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = new PassThrough();
    const drained = discardBodyStream(stream, { maxBytes: 100 });
    vi.advanceTimersByTime(OVERSIZED_BODY_DRAIN.maxMs - 1);
    expect(await isSettled(drained)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await isSettled(drained)).toBe(true);
  });

  it('documents its bounds: 4 MiB past the limit, 5 s', () => {
    expect(OVERSIZED_BODY_DRAIN).toEqual({ maxBytesPastLimit: 4 * MiB, maxMs: 5_000 });
  });
});

describe('oversized bodies are drained before the 413, within bounds (Web streams)', () => {
  it('readWebBodyStream answers a declared-oversized body only once the declared length was read', async () => {
    const { stream, push } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100, declaredLength: 300 });
    push(200);
    expect(await isSettled(read)).toBe(false);
    push(100);
    expect(await read).toEqual(TOO_LARGE);
  });

  it('readWebBodyStream does not read a body declared over maxBytes + maxBytesPastLimit', async () => {
    const { stream } = manualWebStream();
    expect(
      await readWebBodyStream(stream, {
        maxBytes: 100,
        declaredLength: 100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit + 1,
      }),
    ).toEqual(TOO_LARGE);
  });

  it('readWebBodyStream answers a body that passes maxBytes while streaming only once the rest of it was read', async () => {
    const { stream, push, close } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100 });
    push(150);
    expect(await isSettled(read)).toBe(false);
    push(100);
    close();
    expect(await read).toEqual(TOO_LARGE);
  });

  it('readWebBodyStream gives up draining after maxMs on a sender that stops sending', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { stream, push } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100 });
    push(150);
    expect(await isSettled(read)).toBe(false);
    vi.advanceTimersByTime(OVERSIZED_BODY_DRAIN.maxMs);
    expect(await read).toEqual(TOO_LARGE);
  });

  it('readWebBodyStream with drain: false (a client reading a response) answers at once, without draining', async () => {
    const { stream, push } = manualWebStream();
    const read = readWebBodyStream(stream, { maxBytes: 100, drain: false });
    push(150);
    // The stream stays open: a drain would wait here for more of it, up to its 5 s timer.
    expect(await isSettled(read)).toBe(true);
    expect(await read).toEqual(TOO_LARGE);
  });

  // workerd throws from releaseLock() while a read is outstanding (Node, Bun and Deno reject the read instead); that
  // turned the 413 into an uncaught 500 there.
  it.each([
    ['passes maxBytes while streaming', {}],
    ['is declared over maxBytes', { declaredLength: 300 }],
  ])(
    'readWebBodyStream still answers 413 when the drain times out on a body that %s, with workerd’s releaseLock',
    async (_name, declared) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { stream, push } = manualWebStream();
      const getReader = stream.getReader.bind(stream);
      let pending = 0;
      stream.getReader = (() => {
        const reader = getReader();
        const read = reader.read.bind(reader);
        reader.read = () => {
          pending += 1;
          return read().finally(() => (pending -= 1));
        };
        reader.releaseLock = () => {
          if (pending > 0) throw new TypeError('Cannot call releaseLock() on a reader with outstanding read promises.');
        };
        return reader;
      }) as typeof stream.getReader;
      const read = readWebBodyStream(stream, { maxBytes: 100, ...declared });
      push(150);
      expect(await isSettled(read)).toBe(false);
      vi.advanceTimersByTime(OVERSIZED_BODY_DRAIN.maxMs);
      expect(await read).toEqual(TOO_LARGE);
    },
  );
});

// The exact edges of the oversized-body drain (issue 11, mutation survivors): a body declared at exactly
// maxBytes + maxBytesPastLimit is still drained, and the drain stops at exactly its budget, neither a byte early
// (the 413 would go out while the sender is still sending) nor a read late (it would wait on a sender that is done).
describe('discardBodyStream at the edges of its budget (maxBytes + maxBytesPastLimit)', () => {
  it('drains a body declared at exactly the budget instead of skipping it', async () => {
    const stream = new PassThrough();
    const drained = discardBodyStream(stream, {
      maxBytes: 100,
      declaredLength: 100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit,
    });
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
    const read = readWebBodyStream(stream, {
      maxBytes: 100,
      declaredLength: 100 + OVERSIZED_BODY_DRAIN.maxBytesPastLimit,
    });
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
