import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { discardBodyStream, OVERSIZED_BODY_DRAIN, readBodyStream, readWebBodyStream, type ByteStream } from './body.js';

// What the body readers make of the events a request stream can emit: the exact bytes whatever they are, a sender
// failing mid-body, and a drain that ends on 'end', 'close', 'error' or its byte budget (string chunks included),
// without waiting for its timer. Fake timers stand in for the drain's 5 s limit, so "ended without the timer" is
// checked without measuring time.

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

/** A request stream with no resume() and no Node stream machinery: events are emitted by the test. */
const bareStream = (): EventEmitter & ByteStream => new EventEmitter() as unknown as EventEmitter & ByteStream;

afterEach(() => {
  vi.useRealTimers();
});

describe('readBodyStream', () => {
  it('returns the exact bytes, including bytes that are not UTF-8', async () => {
    const stream = new PassThrough();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.write(new Uint8Array([0xff, 0xfe, 0x00]));
    stream.end(new Uint8Array([0x80, 0x41]));
    const result = await read;
    expect(result.ok && Array.from(result.body)).toEqual([0xff, 0xfe, 0x00, 0x80, 0x41]);
  });

  it('returns the bytes of plain Uint8Array chunks as they are', async () => {
    const stream = bareStream();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.emit('data', new Uint8Array([1, 2, 3]));
    stream.emit('end');
    const result = await read;
    expect(result.ok && Array.from(result.body)).toEqual([1, 2, 3]);
  });

  it('rejects with the stream error when the sender fails before the end of the body', async () => {
    const stream = new PassThrough();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.write(new Uint8Array(10));
    await isSettled(read);
    stream.destroy(new Error('connection reset'));
    await expect(read).rejects.toThrow('connection reset');
  });
});

describe('readBodyStream: a sender that went away before the read (no answer left to give)', () => {
  it('rejects at once with the error of a stream destroyed before the call, whose events were all emitted', async () => {
    const stream = new PassThrough();
    stream.on('error', () => {}); // as Node's server does for a request: its 'error' was emitted before the read
    stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    await new Promise((resolve) => setImmediate(resolve)); // 'error' and 'close' are gone
    const read = readBodyStream(stream, { maxBytes: 100 });
    expect(await isSettled(read)).toBe(true);
    await expect(read).rejects.toMatchObject({ message: 'aborted', code: 'ECONNRESET' });
  });

  it('rejects at once, as aborted, for a stream destroyed without an error', async () => {
    const stream = new PassThrough();
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(readBodyStream(stream, { maxBytes: 100 })).rejects.toMatchObject({ message: 'aborted' });
  });

  it("rejects when the stream closes without 'end' or 'error'", async () => {
    const stream = bareStream();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.emit('data', new Uint8Array(3));
    expect(await isSettled(read)).toBe(false);
    stream.emit('close');
    await expect(read).rejects.toMatchObject({ message: 'aborted' });
  });

  it("resolves with the body when 'close' follows 'end'", async () => {
    const stream = bareStream();
    const read = readBodyStream(stream, { maxBytes: 100 });
    stream.emit('data', new Uint8Array([7]));
    stream.emit('end');
    stream.emit('close');
    const result = await read;
    expect(result.ok && Array.from(result.body)).toEqual([7]);
  });

  it('discardBodyStream resolves at once for a destroyed stream instead of waiting for its timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = new PassThrough();
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve)); // its 'close' is gone
    expect(await isSettled(discardBodyStream(stream, { maxBytes: 0 }))).toBe(true);
  });
});

describe('discardBodyStream ends the drain without waiting for its timer', () => {
  it.each(['end', 'close', 'error'])("on '%s'", async (event) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = bareStream();
    const drained = discardBodyStream(stream, { maxBytes: 100 });
    expect(await isSettled(drained)).toBe(false);
    stream.emit(event, event === 'error' ? new Error('gone') : undefined);
    expect(await isSettled(drained)).toBe(true);
  });

  it('once string chunks pass the budget', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = bareStream();
    const drained = discardBodyStream(stream, { maxBytes: 0 });
    stream.emit('data', 'x'.repeat(OVERSIZED_BODY_DRAIN.maxBytesPastLimit));
    expect(await isSettled(drained)).toBe(false);
    stream.emit('data', 'x');
    expect(await isSettled(drained)).toBe(true);
  });

  it('works on a stream without resume()', async () => {
    const stream = bareStream();
    const drained = discardBodyStream(stream, { maxBytes: 0 });
    stream.emit('end');
    await expect(drained).resolves.toBeUndefined();
  });

  it('after readBodyStream passed maxBytes: 413 once maxBytesPastLimit more bytes were drained', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = bareStream();
    const read = readBodyStream(stream, { maxBytes: 10 });
    stream.emit('data', new Uint8Array(11));
    stream.emit('data', new Uint8Array(OVERSIZED_BODY_DRAIN.maxBytesPastLimit));
    expect(await isSettled(read)).toBe(false);
    stream.emit('data', new Uint8Array(1));
    expect(await read).toEqual({ ok: false, code: 'body_too_large' });
  });
});

describe('readWebBodyStream hands the stream back after a 413', () => {
  it('for a body declared over maxBytes', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(20));
        controller.close();
      },
    });
    expect(await readWebBodyStream(stream, { maxBytes: 10, declaredLength: 20 })).toEqual({
      ok: false,
      code: 'body_too_large',
    });
    expect(stream.locked).toBe(false);
  });

  it('for a body that passes maxBytes while streaming', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(20));
        controller.close();
      },
    });
    expect(await readWebBodyStream(stream, { maxBytes: 10 })).toEqual({ ok: false, code: 'body_too_large' });
    expect(stream.locked).toBe(false);
  });
});

// What a drain leaves behind once it is done: no timer holding the process open for another 5 s (a CLI or a test run
// that answered a 413 would wait for it), and none of its listeners on a stream the caller keeps (Fastify's
// request.raw), however many chunks follow the limit.
describe('nothing of a finished drain stays behind', () => {
  it('discardBodyStream leaves no timer pending', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = bareStream();
    const drained = discardBodyStream(stream, { maxBytes: 100 });
    stream.emit('end');
    await drained;
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each(['end', 'close'])(
    "discardBodyStream takes its 'data', 'end' and 'close' listeners off the stream (on '%s')",
    async (event) => {
      const stream = bareStream();
      const drained = discardBodyStream(stream, { maxBytes: 100 });
      stream.emit(event);
      await drained;
      expect(['data', 'end', 'close'].map((name) => stream.listenerCount(name))).toEqual([0, 0, 0]);
    },
  );

  it('readWebBodyStream leaves no timer pending after the drain before its 413', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(150));
        controller.enqueue(new Uint8Array(100));
        controller.close();
      },
    });
    expect(await readWebBodyStream(stream, { maxBytes: 100 })).toEqual({ ok: false, code: 'body_too_large' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('readBodyStream stops listening at the limit: many chunks past it raise no listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const stream = bareStream();
      const read = readBodyStream(stream, { maxBytes: 10 });
      for (let i = 0; i < 20; i += 1) stream.emit('data', new Uint8Array(11));
      stream.emit('end');
      expect(await read).toEqual({ ok: false, code: 'body_too_large' });
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings).toEqual([]);
      expect(stream.listenerCount('data')).toBe(0);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
