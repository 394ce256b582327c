// Claiming and running one event of a stream (turn.ts): an event done while ordering was off (the cursor moved on to
// it under enforce only, and what a failed move says), a backfilled event that fails, and a late event whose claim
// fails.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { GapReport, OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 26, 17, 0, 0);
const SECRET = 'turn-secret';
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

const rejectedDetail = (logs: LogEntry[], code: string) =>
  logs.filter((entry) => entry.message === `delivery rejected: ${code}`).map((entry) => entry.detail);

/** An event done by a receiver with ordering off, on the same store: recorded, no cursor. */
async function doneWhileOff(memory: StreamCursorStore, event: TestEnvelope): Promise<void> {
  const off = createReceiver({ secrets: { '1': SECRET }, now: () => NOW, logger: false, store: memory });
  expect((await off.receive({ method: 'POST', ...(await signer.sign(event)) })).status).toBe(200);
}

describe('detect: an event done while ordering was off', () => {
  it('answers a redelivery of an event done while ordering was off duplicate, and leaves the cursor alone', async () => {
    const events = testStream(2);
    const { deliver, memory, gaps } = setup({ ordering: { mode: 'detect' } });
    await doneWhileOff(memory, events[1]!);
    expect(await deliver(events[1]!)).toEqual({ status: 200, code: 'duplicate' });
    expect(await memory.getCursor(events[0]!.stream_id)).toBeNull();
    expect(gaps).toEqual([]);
  });
});

describe('enforce: an event done while ordering was off', () => {
  it('moves the cursor to it, kept cursorRetainMs', async () => {
    const events = testStream(1);
    const { deliver, memory, clock } = setup({
      ordering: { cursorRetainMs: 2_000 },
      overrides: { retainMs: 1_000 },
    });
    await doneWhileOff(memory, events[0]!);
    expect(await deliver(events[0]!)).toEqual({ status: 200, code: 'duplicate' });
    clock.ms += 1_500;
    expect(await memory.getCursor(events[0]!.stream_id)).toBe(0);
    clock.ms += 1_000;
    expect(await memory.getCursor(events[0]!.stream_id)).toBeNull();
  });

  it('a cursor move that fails: 503 store_unavailable, naming advanceCursor', async () => {
    const events = testStream(1);
    const { deliver, memory, logs } = setup({ store: { advanceCursor: failing } });
    await doneWhileOff(memory, events[0]!);
    expect(await deliver(events[0]!)).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual(['advanceCursor failed']);
  });

  it('a cursor move that does not settle within storeTimeoutMs: 503 store_unavailable, naming advanceCursor', async () => {
    const events = testStream(1);
    const { deliver, memory, logs } = setup({ store: { advanceCursor: never }, overrides: { storeTimeoutMs: 20 } });
    await doneWhileOff(memory, events[0]!);
    expect(await deliver(events[0]!)).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual([
      "the store's advanceCursor() did not settle within storeTimeoutMs (20 ms)",
    ]);
  });
});

describe('enforce: a backfilled event that fails', () => {
  it('answers the delivery with the backfilled event’s seq, id and failure in the detail', async () => {
    const events = testStream(3);
    const { receiver, deliver, logs } = setup({ api: events });
    receiver.onAny((event) => {
      if (event.seq === 1) throw new Error('database down');
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 500, code: 'handler_failed' });
    expect(rejectedDetail(logs, 'handler_failed')).toEqual([
      `backfilled seq 1 (event ${events[1]!.event_id}): The event handler failed; the delivery will be retried.`,
    ]);
  });
});

describe('enforce: a late event whose claim fails', () => {
  it('503 store_unavailable, naming the claim', async () => {
    const events = testStream(3);
    const { receiver, deliver, memory, logs } = setup({ store: { claim: failing } });
    receiver.onGap(() => {});
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual(['claim failed']);
  });
});
