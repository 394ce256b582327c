// Recording an event in order after its handlers succeeded (record.ts): what the log says when a store call fails or
// does not settle (naming the call), a cursor moved meanwhile under each mode, and how long records and cursors are
// kept.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { GapReport, OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 26, 15, 0, 0);
const SECRET = 'record-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

type Overrides = Partial<Record<keyof StreamCursorStore, (...args: never[]) => unknown>>;

const never = () => new Promise<never>(() => {});
const failing = () => Promise.reject(new Error('store down'));

function setup(
  options: {
    ordering?: Partial<OrderingOptions>;
    api?: TestEnvelope[];
    overrides?: Partial<ReceiverOptions>;
    store?: Overrides;
  } = {},
) {
  // One clock for the store and the receiver, moved by seconds: well within the signatures' 5 minutes of skew.
  const clock = { ms: NOW };
  const memory = createMemoryStore({ now: () => clock.ms });
  const overrides = options.store ?? {};
  const store = new Proxy(memory, {
    get(target, name, receiver) {
      const replaced = (overrides as Record<PropertyKey, unknown>)[name];
      if (typeof replaced === 'function') return replaced;
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const api = options.api ?? [];
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => clock.ms,
    logger: (entry) => logs.push(entry),
    store,
    ordering: streamOrdering({
      mode: 'enforce',
      fetchEventsAfter: async function* (streamId, afterSeq) {
        for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
      },
      ...options.ordering,
    }),
    ...options.overrides,
  });
  receiver.onAny((event) => {
    seen.push(event.seq);
  });
  receiver.onGap((report) => {
    gaps.push(report);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    const answer = await receiver.receive({ method: 'POST', headers, body });
    return { status: answer.status, code: answer.code };
  };
  return { receiver, deliver, memory, logs, seen, gaps, clock };
}

const lines = (logs: LogEntry[], level: LogEntry['level']) =>
  logs.filter((entry) => entry.level === level).map((entry) => entry.message);

describe('a record in order that fails after the handlers succeeded: 200, and the log names the call', () => {
  it('completeInOrder rejects', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: { completeInOrder: failing } });
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    expect(lines(logs, 'error')).toEqual([
      'recording the event failed after the handlers succeeded: completeInOrder failed; trying again in the background',
    ]);
  });

  it('completeInOrder does not settle within storeTimeoutMs', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: { completeInOrder: never }, overrides: { storeTimeoutMs: 20 } });
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    expect(lines(logs, 'error')).toEqual([
      "recording the event failed after the handlers succeeded: the store's completeInOrder() did not settle within storeTimeoutMs (20 ms); trying again in the background",
    ]);
  });

  it('after a moved cursor, complete() does not settle within storeTimeoutMs', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({
      store: { completeInOrder: async () => 'cursor_moved', complete: never },
      overrides: { storeTimeoutMs: 20 },
    });
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    expect(lines(logs, 'error')).toEqual([
      "recording the event failed after the handlers succeeded: the store's complete() did not settle within storeTimeoutMs (20 ms); trying again in the background",
    ]);
  });

  it('detect, after a gap, the cursor read does not settle within storeTimeoutMs', async () => {
    const events = testStream(3);
    const { deliver, logs, memory } = setup({ ordering: { mode: 'detect' }, overrides: { storeTimeoutMs: 20 } });
    await deliver(events[0]!);
    memory.getCursor = never;
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(lines(logs, 'error')).toEqual([
      "recording the event failed after the handlers succeeded: the store's getCursor() did not settle within storeTimeoutMs (20 ms); trying again in the background",
    ]);
  });

  it('detect, after a gap, pulling the cursor forward does not settle within storeTimeoutMs', async () => {
    const events = testStream(3);
    const { deliver, logs } = setup({
      ordering: { mode: 'detect' },
      overrides: { storeTimeoutMs: 20 },
      store: { advanceCursor: never },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(lines(logs, 'error')).toEqual([
      "recording the event failed after the handlers succeeded: the store's advanceCursor() did not settle within storeTimeoutMs (20 ms); trying again in the background",
    ]);
  });
});

describe('a cursor moved while the handlers ran', () => {
  it('enforce: the event is recorded, the cursor left where it was, and one warning says so', async () => {
    const [event] = testStream(1);
    const { deliver, memory, logs } = setup({ store: { completeInOrder: async () => 'cursor_moved' } });
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    expect(await memory.getCursor(event!.stream_id)).toBeNull();
    expect(
      logs
        .filter((entry) => entry.level === 'warn')
        .map(({ message, eventId, eventType }) => ({ message, eventId, eventType })),
    ).toEqual([
      {
        message:
          'the stream cursor moved while the handlers ran (advanceCursor or another process); the event was recorded as processed',
        eventId: event!.event_id,
        eventType: event!.event,
      },
    ]);
  });

  it('enforce: the warning is not repeated when the record is tried again', async () => {
    const [event] = testStream(1);
    let completes = 0;
    const { deliver, memory, logs } = setup({
      store: {
        completeInOrder: async () => 'cursor_moved',
        complete: (...args: never[]) => {
          if (++completes === 1) return failing();
          return (memory.complete as (...a: never[]) => unknown)(...args);
        },
      },
    });
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    // The first retry comes 250 ms later.
    while (!lines(logs, 'info').includes('recording the event succeeded at attempt 2'))
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(completes).toBe(2);
    expect(lines(logs, 'warn')).toEqual([
      'the stream cursor moved while the handlers ran (advanceCursor or another process); the event was recorded as processed',
    ]);
    expect(lines(logs, 'info')).toContain('recording the event succeeded at attempt 2');
  });

  it('enforce: the record is kept retainMs, then a redelivery runs again', async () => {
    const [event] = testStream(1);
    const { deliver, clock, seen } = setup({
      store: { completeInOrder: async () => 'cursor_moved' },
      overrides: { retainMs: 1_000 },
    });
    await deliver(event!);
    clock.ms += 1_500;
    expect(await deliver(event!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 0]);
  });
});

describe('detect', () => {
  it('logs a gap and a late event at warn, saying which seq was expected', async () => {
    const events = testStream(3);
    const { deliver, logs } = setup({ ordering: { mode: 'detect' } });
    await deliver(events[0]!);
    await deliver(events[2]!);
    await deliver(events[1]!);
    expect(
      logs.filter((entry) => entry.level === 'warn').map(({ code, message, eventId }) => ({ code, message, eventId })),
    ).toEqual([
      { code: 'stream_gap', message: 'stream gap: expected seq 1, got 2', eventId: events[2]!.event_id },
      {
        code: 'stream_late',
        message: 'late event: seq 1 is behind the stream cursor (next expected 3)',
        eventId: events[1]!.event_id,
      },
    ]);
  });

  it('with firstSeq 1, a stream that starts at 0 is no gap and no late event', async () => {
    const events = testStream(2);
    const { deliver, gaps, memory } = setup({ ordering: { mode: 'detect', firstSeq: 1 } });
    for (const event of events) expect(await deliver(event)).toEqual({ status: 200, code: undefined });
    expect(gaps).toEqual([]);
    expect(await memory.getCursor(events[0]!.stream_id)).toBe(1);
  });

  it('keeps a cursor pulled past a gap cursorRetainMs', async () => {
    const events = testStream(3);
    const { deliver, memory, clock } = setup({
      ordering: { mode: 'detect', cursorRetainMs: 2_000 },
      overrides: { retainMs: 1_000 },
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    clock.ms += 1_500;
    expect(await memory.getCursor(events[0]!.stream_id)).toBe(2);
    clock.ms += 1_000;
    expect(await memory.getCursor(events[0]!.stream_id)).toBeNull();
  });

  it('an onGap handler whose promise rejects changes nothing, and leaves no unhandled rejection', async () => {
    const events = testStream(3);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { receiver, deliver } = setup({ ordering: { mode: 'detect' } });
      receiver.onGap(() => Promise.reject(new Error('metrics down')));
      await deliver(events[0]!);
      expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
