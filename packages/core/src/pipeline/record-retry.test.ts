// Recording a success again after the store failed to (record-retry.ts): the event must not stay claimed for the
// rest of its lease (409 for its redeliveries, a stalled stream, a second run once the lease ends) when the store
// was down only for a moment.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { DedupeStore } from '../store/dedupe.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore, type MemoryStore } from '../store/memory-store.js';
import { RECORD_RETRY_DELAYS_MS } from './record-retry.js';
import { createReceiver, type ReceiveInput, type ReceiverOptions } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const NOW = Date.UTC(2026, 10, 27, 8, 0, 0);
const SECRET = 'record-retry-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});
// Only the timers: the retries wait on them, while the signer's Web Crypto promises must go on as usual.
beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => vi.useRealTimers());

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    logger: (entry) => logs.push(entry),
    ...overrides,
  });
  const ran: string[] = [];
  receiver.onAny((event) => {
    ran.push(`${event.event_id}:${event.seq}`);
  });
  const deliver = async (envelope: TestEnvelope, input: Partial<ReceiveInput> = {}) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body, ...input });
  };
  return { receiver, deliver, logs, ran };
}

/** A memory store whose `method` fails its first `times` calls, by throwing at once or by rejecting. */
function failingFirst<M extends 'complete' | 'completeInOrder' | 'advanceCursor'>(
  method: M,
  times: number,
  how: 'throw' | 'reject',
): MemoryStore {
  const store = createMemoryStore({ now: () => NOW });
  const real = store[method].bind(store) as (...args: unknown[]) => unknown;
  let failures = times;
  (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
    if (failures-- <= 0) return real(...args);
    const error = new Error('connection terminated due to connection timeout');
    if (how === 'throw') throw error;
    return Promise.reject(error);
  };
  return store;
}

const messages = (logs: LogEntry[]) => logs.map((entry) => `${entry.level} ${entry.message}`);

describe('after the handlers succeeded, a complete() that failed', () => {
  it.each(['throw', 'reject'] as const)(
    '(%s) is tried again in the background: the redelivery is a duplicate, not 409 for the whole lease',
    async (how) => {
      const { deliver, logs, ran } = setup({ store: failingFirst('complete', 1, how) });
      const event = testEvents.dataRequestPendingApproval();
      expect((await deliver(event)).status).toBe(200);
      // Before the retry the event is still claimed by the first delivery.
      expect((await deliver(event)).code).toBe('in_progress');
      await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
      const again = await deliver(event);
      expect([again.status, again.code]).toEqual([200, 'duplicate']);
      expect(ran).toEqual([`${event.event_id}:0`]);
      expect(messages(logs)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^error complete failed after the handlers succeeded: .*; trying again in the background$/,
          ),
          'info complete succeeded at attempt 2: the event is recorded as processed',
        ]),
      );
    },
  );

  it('goes on after each delay while the store still fails, then says it gave up and what that means', async () => {
    const attempts = RECORD_RETRY_DELAYS_MS.length + 1;
    const { deliver, logs } = setup({ store: failingFirst('complete', attempts, 'reject') });
    const event = testEvents.dataRequestPendingApproval();
    expect((await deliver(event)).status).toBe(200);
    for (const delay of RECORD_RETRY_DELAYS_MS.slice(0, -1)) await vi.advanceTimersByTimeAsync(delay);
    expect(logs.filter((entry) => entry.message.startsWith(`complete failed ${attempts} times`))).toEqual([]);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS.at(-1)!);
    const gaveUp = logs.filter((entry) =>
      entry.message.startsWith(`complete failed ${attempts} times after the handlers succeeded`),
    );
    expect(gaveUp).toEqual([
      expect.objectContaining({ level: 'error', code: 'store_unavailable', eventId: event.event_id }),
    ]);
    expect(gaveUp[0]!.message).toMatch(/stays claimed until its lease ends \(leaseMs\)/);
    // No more attempts after that.
    const entries = logs.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(logs.length).toBe(entries);
  });

  it('is not tried again when complete() answered false (the lease ended: nothing to retry)', async () => {
    const store = createMemoryStore({ now: () => NOW });
    store.complete = () => false;
    const { deliver, logs } = setup({ store });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(messages(logs).filter((line) => /attempt|trying again/.test(line))).toEqual([]);
  });

  it('is handed to waitUntil, so a Worker keeps running the retries after the answer', async () => {
    const handed: Promise<unknown>[] = [];
    const { deliver, logs } = setup({ store: failingFirst('complete', 1, 'reject') });
    expect(
      (await deliver(testEvents.dataRequestPendingApproval(), { waitUntil: (promise) => handed.push(promise) })).status,
    ).toBe(200);
    expect(handed).toHaveLength(1);
    let settled = false;
    void handed[0]!.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(settled).toBe(true);
    expect(messages(logs)).toContain('info complete succeeded at attempt 2: the event is recorded as processed');
  });

  it('a timed-out complete() that lands late is not counted twice: the retry says the claim is no longer its own', async () => {
    const memory = createMemoryStore({ now: () => NOW });
    let first = true;
    const store: DedupeStore = {
      claim: (id, options) => memory.claim(id, options),
      release: (id, token) => memory.release(id, token),
      complete: (id, token, options) => {
        if (!first) return memory.complete(id, token, options);
        first = false;
        // Lands after storeTimeoutMs, before the first retry.
        return new Promise((resolve) => setTimeout(() => resolve(memory.complete(id, token, options)), 100));
      },
    };
    const { receiver, deliver, logs, ran } = setup({ store, storeTimeoutMs: 50 });
    const event = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(event); // before the clock moves: only the store may wait on it
    const answer = receiver.receive({ method: 'POST', headers, body });
    await vi.advanceTimersByTimeAsync(50);
    expect((await answer).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(messages(logs)).toContain(
      'warn complete at attempt 2 found the event no longer claimed by this delivery: an earlier attempt landed late, or the lease ended',
    );
    expect((await deliver(event)).code).toBe('duplicate');
    expect(ran).toHaveLength(1);
  });
});

describe('with ordering enforce, a completeInOrder() that failed', () => {
  it('is tried again, so the stream moves on without a backfill once the store is back', async () => {
    const fetchEventsAfter = vi.fn(async function* () {});
    const { deliver, logs, ran } = setup({
      store: failingFirst('completeInOrder', 1, 'reject'),
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter }),
    });
    const [first, second] = testStream(2);
    expect((await deliver(first!)).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(messages(logs)).toContain('info recording the event succeeded at attempt 2');
    const next = await deliver(second!);
    expect([next.status, next.code]).toEqual([200, undefined]);
    expect(fetchEventsAfter).not.toHaveBeenCalled();
    expect(ran).toEqual([`${first!.event_id}:0`, `${second!.event_id}:1`]);
  });

  it('that keeps failing is logged once as given up, naming the stream that waits', async () => {
    const attempts = RECORD_RETRY_DELAYS_MS.length + 1;
    const fetchEventsAfter = async function* () {};
    const { deliver, logs } = setup({
      store: failingFirst('completeInOrder', attempts, 'throw'),
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter }),
    });
    const [first] = testStream(1);
    expect((await deliver(first!)).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0));
    const gaveUp = logs.filter((entry) => entry.message.startsWith(`recording the event failed ${attempts} times`));
    expect(gaveUp).toEqual([
      expect.objectContaining({ level: 'error', code: 'store_unavailable', eventId: first!.event_id }),
    ]);
    expect(gaveUp[0]!.message).toMatch(/its stream waits for it$/);
  });

  it('under detect, reports a gap once though the record after it is tried again', async () => {
    const store = failingFirst('complete', 1, 'reject');
    const { receiver, deliver } = setup({ store, ordering: streamOrdering({ mode: 'detect' }) });
    const gaps: string[] = [];
    receiver.onGap((report) => {
      gaps.push(`${report.kind} ${report.seq}`);
    });
    const [first, , third] = testStream(3);
    await deliver(first!);
    expect((await deliver(third!)).status).toBe(200); // seq 1 never came: a gap, and complete() fails once
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(gaps).toEqual(['gap 2']);
    expect(await store.getCursor(third!.stream_id)).toBe(2);
  });

  it('that timed out and landed late is not recorded twice: the retry says the claim is no longer its own', async () => {
    const store = createMemoryStore({ now: () => NOW });
    const inOrder = store.completeInOrder.bind(store);
    let first = true;
    store.completeInOrder = (...args) => {
      if (!first) return inOrder(...args);
      first = false;
      return new Promise((resolve) => setTimeout(() => resolve(inOrder(...args)), 100)); // after storeTimeoutMs
    };
    const { receiver, logs } = setup({
      store,
      storeTimeoutMs: 50,
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: async function* () {} }),
    });
    const [event] = testStream(1);
    const { headers, body } = await signer.sign(event!);
    const answer = receiver.receive({ method: 'POST', headers, body });
    await vi.advanceTimersByTimeAsync(50);
    expect((await answer).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    const lines = messages(logs);
    expect(lines).toContain(
      'warn recording the event at attempt 2 found it no longer claimed by this delivery: an earlier attempt landed late, or the lease ended',
    );
    expect(lines.filter((line) => /succeeded at attempt|raise leaseMs/.test(line))).toEqual([]);
    expect(await store.getCursor(event!.stream_id)).toBe(0);
  });

  it('under detect, a retry after the record landed only moves the cursor: no second report, no lost-claim warning', async () => {
    const store = failingFirst('advanceCursor', 1, 'reject');
    const { receiver, deliver, logs } = setup({ store, ordering: streamOrdering({ mode: 'detect' }) });
    const gaps: string[] = [];
    receiver.onGap((report) => {
      gaps.push(`${report.kind} ${report.seq}`);
    });
    const [first, , third] = testStream(3);
    await deliver(first!);
    expect((await deliver(third!)).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(gaps).toEqual(['gap 2']);
    expect(await store.getCursor(third!.stream_id)).toBe(2);
    expect(messages(logs)).toContain('info recording the event succeeded at attempt 2');
    expect(messages(logs).filter((line) => /no longer claimed|raise leaseMs/.test(line))).toEqual([]);
  });
});

describe('what the background retries of complete() report', () => {
  const GAVE_UP_TAIL =
    'the event stays claimed until its lease ends (leaseMs), and a redelivery after that runs the handlers again';

  it('gives up naming the last attempt’s failure, and logs that error with it', async () => {
    const attempts = RECORD_RETRY_DELAYS_MS.length + 1;
    const { deliver, logs } = setup({ store: failingFirst('complete', attempts, 'reject') });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0));
    const gaveUp = logs.find((entry) => entry.message.startsWith(`complete failed ${attempts} times`));
    expect(gaveUp?.message).toBe(
      `complete failed ${attempts} times after the handlers succeeded: complete failed; ${GAVE_UP_TAIL}`,
    );
    expect((gaveUp?.error as { message?: unknown } | undefined)?.message).toBe(
      'connection terminated due to connection timeout',
    );
  });

  it('gives up saying that complete() did not settle in time when every attempt timed out', async () => {
    const store = createMemoryStore({ now: () => NOW });
    // A store method may answer with a promise (docs/architecture.md §7.1); this one never settles.
    store.complete = () => new Promise<never>(() => {}) as never;
    const { deliver, logs } = setup({ store, storeTimeoutMs: 100 });
    const answer = deliver(testEvents.dataRequestPendingApproval());
    await vi.advanceTimersByTimeAsync(100);
    expect((await answer).status).toBe(200);
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay + 100, 0));
    const attempts = RECORD_RETRY_DELAYS_MS.length + 1;
    expect(messages(logs).filter((line) => line.includes(`complete failed ${attempts} times`))).toEqual([
      `error complete failed ${attempts} times after the handlers succeeded: the store's complete() did not settle within storeTimeoutMs (100 ms); ${GAVE_UP_TAIL}`,
    ]);
  });

  it('logs an error, not a lost claim, when a retried complete() answers something other than a boolean', async () => {
    const store = createMemoryStore({ now: () => NOW });
    let calls = 0;
    store.complete = () =>
      ++calls === 1 ? (Promise.reject(new Error('connection reset')) as never) : ('yes' as never);
    const { deliver, logs } = setup({ store });
    const event = testEvents.dataRequestPendingApproval();
    expect((await deliver(event)).status).toBe(200);
    const before = logs.length;
    await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
    expect(logs.slice(before)).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'the store answered complete() with something other than a boolean',
        code: 'store_unavailable',
        eventId: event.event_id,
      }),
    ]);
  });

  it('runs on runtimes whose setTimeout answers a number without unref() (Workers, Deno, browsers)', async () => {
    // The fake timers, behind the shape such runtimes give: a number for a handle.
    const fakeSetTimeout = globalThis.setTimeout;
    const fakeClearTimeout = globalThis.clearTimeout;
    const handles = new Map<number, ReturnType<typeof setTimeout>>();
    vi.stubGlobal('setTimeout', (callback: () => void, ms: number) => {
      const id = handles.size + 1;
      handles.set(id, fakeSetTimeout(callback, ms));
      return id;
    });
    vi.stubGlobal('clearTimeout', (id: number) => fakeClearTimeout(handles.get(id)));
    try {
      const { deliver, logs } = setup({ store: failingFirst('complete', 1, 'reject') });
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
      await vi.advanceTimersByTimeAsync(RECORD_RETRY_DELAYS_MS[0]!);
      expect(messages(logs)).toContain('info complete succeeded at attempt 2: the event is recorded as processed');
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
