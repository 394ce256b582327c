// Ordering on: what each store outcome does to the answer and the log (failing calls, an in-progress claim, a lost
// lease, a cursor moved by someone else, an event done while ordering was off), the stream id a cursor can hold,
// and the log entries of gaps, late events and backfills. One case per test.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { GapReport, OrderingOptions } from './types.js';
import { createReceiver } from '../receiver.js';
import { MAX_STREAM_ID_LENGTH, type StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 23, 8, 30, 0);
const SECRET = 'ordering-outcomes-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

type Overrides = Partial<Record<keyof StreamCursorStore, (...args: never[]) => unknown>>;

/** A memory store, some of whose methods a test replaces. */
function storeWith(
  overrides: Overrides = {},
  inner: StreamCursorStore = createMemoryStore({ now: () => NOW }),
): StreamCursorStore {
  return new Proxy(inner, {
    get(target, name, receiver) {
      const replaced = (overrides as Record<PropertyKey, unknown>)[name];
      if (typeof replaced === 'function') return replaced;
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function setup(
  options: {
    store?: StreamCursorStore;
    ordering?: Partial<OrderingOptions>;
    api?: TestEnvelope[];
    apiIgnoresAfterSeq?: boolean;
  } = {},
) {
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  const api = options.api ?? [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    logger: (entry) => logs.push(entry),
    store: options.store ?? storeWith(),
    handlerTimeoutMs: 50,
    ordering: streamOrdering({
      mode: 'enforce',
      fetchEventsAfter: async function* (streamId, afterSeq) {
        for (const event of api) {
          if (event.stream_id === streamId && (options.apiIgnoresAfterSeq || event.seq > afterSeq))
            yield structuredClone(event);
        }
      },
      ...options.ordering,
    }),
  });
  receiver.onAny((event) => {
    seen.push(event.seq);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, logs, seen, gaps };
}

const failing = () => Promise.reject(new Error('store down'));
const where = (event: TestEnvelope) => ({ eventId: event.event_id, eventType: event.event });

describe('store calls that fail or hold the event', () => {
  it.each<[string, 'enforce' | 'detect']>([
    ['enforce', 'enforce'],
    ['detect', 'detect'],
  ])('%s: a claim that fails is answered 503 store_unavailable', async (_name, mode) => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: storeWith({ claim: failing }), ordering: { mode } });
    expect((await deliver(event!)).code).toBe('store_unavailable');
    expect(logs.find((entry) => entry.code === 'store_unavailable')?.detail).toBe('claim failed');
  });

  it('a claim held by another delivery is answered 409 in_progress', async () => {
    const [event] = testStream(1);
    const { deliver } = setup({ store: storeWith({ claim: async () => ({ status: 'in_progress' }) }) });
    const answer = await deliver(event!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 409, code: 'in_progress' });
  });

  it('a cursor read that fails is answered 503 store_unavailable', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: storeWith({ getCursor: failing }) });
    expect((await deliver(event!)).code).toBe('store_unavailable');
    expect(logs.find((entry) => entry.code === 'store_unavailable')?.detail).toBe('getCursor failed');
  });

  describe('for an event behind the cursor', () => {
    async function behind(overrides: Overrides) {
      const inner = createMemoryStore({ now: () => NOW });
      const events = testStream(3);
      await inner.advanceCursor(events[0]!.stream_id, 2, { retainMs: 60_000 });
      const context = setup({ store: storeWith(overrides, inner) });
      context.receiver.onGap(() => {});
      return { ...context, event: events[1]! };
    }

    it('a claim that fails is answered 503 store_unavailable', async () => {
      const { deliver, event } = await behind({ claim: failing });
      expect((await deliver(event)).code).toBe('store_unavailable');
    });

    it('a claim held by another delivery is answered 409 in_progress', async () => {
      const { deliver, event } = await behind({ claim: async () => ({ status: 'in_progress' }) });
      expect((await deliver(event)).code).toBe('in_progress');
    });

    it('a complete that fails after onGap took it is still answered 200 late, and logged', async () => {
      const { deliver, event, logs } = await behind({ complete: failing });
      expect((await deliver(event)).code).toBe('late');
      expect(logs).toContainEqual(
        expect.objectContaining({ level: 'error', code: 'store_unavailable', ...where(event) }),
      );
    });
  });
});

describe('recording an event after its handlers succeeded', () => {
  it('a lost lease is answered 200 and logged with the fix', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: storeWith({ completeInOrder: async () => 'lease_lost' }) });
    expect((await deliver(event!)).status).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('raise leaseMs') as unknown,
        ...where(event!),
      }),
    );
  });

  it('a failure is answered 200 and logged as store_unavailable', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ store: storeWith({ completeInOrder: failing }) });
    expect((await deliver(event!)).status).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'error', code: 'store_unavailable', ...where(event!) }),
    );
  });

  it('enforce: a cursor moved meanwhile still records the event as done, and says so', async () => {
    const [event] = testStream(1);
    const { deliver, logs, seen } = setup({ store: storeWith({ completeInOrder: async () => 'cursor_moved' }) });
    expect((await deliver(event!)).status).toBe(200);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', ...where(event!) }));
    expect((await deliver(event!)).code).toBe('duplicate');
    expect(seen).toEqual([0]);
  });
});

describe('detect', () => {
  it('answers a redelivery duplicate', async () => {
    const [event] = testStream(1);
    const { deliver } = setup({ ordering: { mode: 'detect' } });
    await deliver(event!);
    expect((await deliver(event!)).code).toBe('duplicate');
  });

  it('logs a gap as stream_gap and a late event as stream_late, and moves the cursor past the gap', async () => {
    const inner = createMemoryStore({ now: () => NOW });
    const events = testStream(3);
    const { receiver, deliver, logs } = setup({ store: storeWith({}, inner), ordering: { mode: 'detect' } });
    const reports: GapReport[] = [];
    receiver.onGap((report) => {
      reports.push(report);
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    await deliver(events[1]!);
    expect(logs.filter((entry) => entry.level === 'warn').map((entry) => [entry.code, entry.eventId])).toEqual([
      ['stream_gap', events[2]!.event_id],
      ['stream_late', events[1]!.event_id],
    ]);
    expect(reports.map((report) => [report.kind, report.seq, report.expectedSeq])).toEqual([
      ['gap', 2, 1],
      ['late', 1, 3],
    ]);
    expect(await inner.getCursor(events[0]!.stream_id)).toBe(2);
  });
});

describe('an event done while ordering was off', () => {
  it('is answered duplicate and moves the cursor to it', async () => {
    const inner = createMemoryStore({ now: () => NOW });
    const events = testStream(2);
    const off = createReceiver({ secrets: { '1': SECRET }, now: () => NOW, logger: false, store: inner });
    const signed = await signer.sign(events[0]!);
    await off.receive({ method: 'POST', ...signed });
    const { deliver, seen } = setup({ store: storeWith({}, inner) });
    expect((await deliver(events[0]!)).code).toBe('duplicate');
    expect(await inner.getCursor(events[0]!.stream_id)).toBe(0);
    expect((await deliver(events[1]!)).status).toBe(200);
    expect(seen).toEqual([1]);
  });

  it('is skipped by a backfill, which then runs the event that arrived', async () => {
    const inner = createMemoryStore({ now: () => NOW });
    const events = testStream(3);
    const off = createReceiver({ secrets: { '1': SECRET }, now: () => NOW, logger: false, store: inner });
    await off.receive({ method: 'POST', ...(await signer.sign(events[1]!)) });
    await inner.advanceCursor(events[0]!.stream_id, 0, { retainMs: 60_000 });
    const { deliver, seen } = setup({ store: storeWith({}, inner), api: events });
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code, seen }).toEqual({ status: 200, code: undefined, seen: [2] });
  });
});

describe('backfill', () => {
  it('skips events the API answers from before the gap', async () => {
    const events = testStream(3);
    // An API that answers the whole stream, whatever afterSeq says.
    const { deliver, seen } = setup({ api: events, apiIgnoresAfterSeq: true });
    await deliver(events[0]!);
    expect((await deliver(events[2]!)).status).toBe(200);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('logs a backfilled gap at info as stream_backfilled', async () => {
    const events = testStream(3);
    const { deliver, logs } = setup({ api: events });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', code: 'stream_backfilled', ...where(events[2]!) }),
    );
  });

  it('says which seqs the API does not have yet', async () => {
    const events = testStream(4);
    const { deliver, logs } = setup({ api: [events[0]!] });
    await deliver(events[0]!);
    expect((await deliver(events[3]!)).code).toBe('out_of_order');
    expect(logs.find((entry) => entry.code === 'out_of_order')?.detail).toBe(
      'seq 1 to 2 are not available from the API yet',
    );
  });
});

describe('stream ids a cursor store can keep', () => {
  it.each<['enforce' | 'detect']>([['enforce'], ['detect']])(
    '%s: refuses a stream_id longer than MAX_STREAM_ID_LENGTH',
    async (mode) => {
      const [event] = testStream(1, { stream_id: 's'.repeat(MAX_STREAM_ID_LENGTH + 1) });
      const { deliver } = setup({ ordering: { mode } });
      const answer = await deliver(event!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 400, code: 'envelope_invalid' });
    },
  );

  it.each<['enforce' | 'detect', string, RegExp]>([
    ['enforce', 'req_\u0000x', /NUL/],
    ['detect', 'req_\u0000x', /NUL/],
    ['enforce', 'req_\ud800', /lone surrogate/],
    ['detect', 'req_\udc00x', /lone surrogate/],
  ])(
    '%s: refuses the stream_id %j, which not every store keeps as itself, before any store call',
    async (mode, streamId, reason) => {
      const [event] = testStream(1, { stream_id: streamId });
      let storeCalls = 0;
      const counting = new Proxy(createMemoryStore({ now: () => NOW }), {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function'
            ? (...args: unknown[]) => (storeCalls++, (value as (...a: unknown[]) => unknown).apply(target, args))
            : value;
        },
      });
      const { deliver, logs } = setup({ ordering: { mode }, store: counting });
      const answer = await deliver(event!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 400, code: 'envelope_invalid' });
      expect(logs.map((entry) => entry.detail).join('\n')).toMatch(reason);
      expect(storeCalls).toBe(0);
    },
  );

  it.each<['enforce' | 'detect']>([['enforce'], ['detect']])(
    '%s: accepts a stream_id of exactly MAX_STREAM_ID_LENGTH',
    async (mode) => {
      const [event] = testStream(1, { stream_id: 's'.repeat(MAX_STREAM_ID_LENGTH) });
      const { deliver } = setup({ ordering: { mode } });
      expect((await deliver(event!)).status).toBe(200);
    },
  );
});

describe('a late event whose onGap handler outlives handlerTimeoutMs and then fails', () => {
  it('frees the claim, so the retry hands it to onGap again', async () => {
    const inner = createMemoryStore({ now: () => NOW });
    const events = testStream(3);
    await inner.advanceCursor(events[0]!.stream_id, 2, { retainMs: 60_000 });
    const { receiver, deliver } = setup({ store: storeWith({}, inner) });
    let calls = 0;
    receiver.onGap(async () => {
      calls += 1;
      if (calls === 1) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        throw new Error('failed late');
      }
    });
    expect((await deliver(events[1]!)).code).toBe('handler_timeout');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect({ code: (await deliver(events[1]!)).code, calls }).toEqual({ code: 'late', calls: 2 });
  });
});
