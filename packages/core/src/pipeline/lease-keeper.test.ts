// A handler past handlerTimeoutMs that outlives its lease (lease-keeper.ts): its claim is extended while it runs, so
// a retry is answered in_progress instead of running the handlers beside it; the extensions stop when it settles;
// a store without extend(), or whose extend() fails or answers false, is logged as the risk it leaves.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import type { DedupeStore } from '../store/dedupe.js';
import { createMemoryStore } from '../store/memory-store.js';

const SECRET = 'lease-keeper-secret';
// The shortest lease the receiver accepts with these timeouts is above 40 + 2 × 10 ms; extended every 30 ms.
const TIMEOUTS = { handlerTimeoutMs: 40, storeTimeoutMs: 10, leaseMs: 90 };

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': SECRET } });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver whose one handler waits for `finish()`; counts its runs and the most that ran at once. */
function slowReceiver(store: DedupeStore) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    store,
    logger: (entry) => logs.push(entry),
    ...TIMEOUTS,
  });
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const runs = { started: 0, running: 0, most: 0 };
  receiver.on('kyb.data_request.refused', async () => {
    runs.started++;
    runs.most = Math.max(runs.most, ++runs.running);
    try {
      await gate;
    } finally {
      runs.running--;
    }
  });
  return { receiver, logs, runs, finish, fail };
}

/** A memory store whose extend() calls are counted, and may be replaced. */
function countingStore(extend?: DedupeStore['extend'] | null) {
  const memory = createMemoryStore();
  const calls = { extend: 0, complete: 0, release: 0 };
  const store: DedupeStore = {
    claim: (id, options) => memory.claim(id, options),
    complete: (id, token, options) => (calls.complete++, memory.complete(id, token, options)),
    release: (id, token) => (calls.release++, memory.release(id, token)),
  };
  if (extend !== null) {
    store.extend = (id, token, options) => {
      calls.extend++;
      return extend ? extend(id, token, options) : memory.extend(id, token, options);
    };
  }
  return { store, calls };
}

/**
 * Delivers one event to a receiver over {@link countingStore}`(extend)` whose handler passes handlerTimeoutMs, lets
 * it run `runsMs` more, then finishes it; `whenFinished` is the extensions counted at that moment.
 */
async function runLate(extend: DedupeStore['extend'] | null | undefined, runsMs: number) {
  const { store, calls } = countingStore(extend);
  const { receiver, logs, finish } = slowReceiver(store);
  const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
  const deliverAgain = async () => (await receiver.receive({ method: 'POST', headers, body })).code;
  expect(await deliverAgain()).toBe('handler_timeout');
  await sleep(runsMs);
  const whenFinished = calls.extend;
  finish();
  await sleep(20);
  return { calls, logs, whenFinished, deliverAgain };
}

describe('a handler past handlerTimeoutMs that outlives leaseMs', () => {
  it('keeps its event: a retry past the lease is answered in_progress and runs nothing; after its success, duplicate', async () => {
    const { receiver, runs, finish } = slowReceiver(createMemoryStore());
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const deliver = async () => (await receiver.receive({ method: 'POST', headers, body })).code;

    expect(await deliver()).toBe('handler_timeout');
    await sleep(3 * TIMEOUTS.leaseMs); // three leases past the claim
    expect(await deliver()).toBe('in_progress');
    expect(runs).toEqual({ started: 1, running: 1, most: 1 });

    finish();
    await sleep(20);
    expect(await deliver()).toBe('duplicate');
    expect(runs).toEqual({ started: 1, running: 0, most: 1 });
  });

  it('a late failure frees the claim: the retry runs the handlers again', async () => {
    const { receiver, runs, fail } = slowReceiver(createMemoryStore());
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('handler_timeout');
    await sleep(2 * TIMEOUTS.leaseMs);
    fail(new Error('gave up'));
    await sleep(20);
    // The gate stays rejected, so the retry's run fails at once: what matters is that it ran, after the first.
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('handler_failed');
    expect(runs).toEqual({ started: 2, running: 0, most: 1 });
  });

  it('extends the lease while it runs, and stops once it settled: the success is recorded with its token', async () => {
    const { calls, logs, whenFinished, deliverAgain } = await runLate(undefined, 4 * TIMEOUTS.leaseMs);
    // At once, then every 30 ms: about 12 in 360 ms; timers on a busy machine may fire late, never early.
    expect(whenFinished).toBeGreaterThanOrEqual(3);
    expect(whenFinished).toBeLessThanOrEqual(14);
    // Settling stops the keeper before any timer can fire again (microtasks run first).
    await sleep(3 * TIMEOUTS.leaseMs);
    expect(calls.extend).toBe(whenFinished);
    expect(calls.complete).toBe(1);
    expect(logs.filter((entry) => entry.level !== 'info' && /lease/.test(entry.message))).toEqual([]);
    expect(await deliverAgain()).toBe('duplicate');
  });

  it('with a store that has no extend(): warns that a retry may run beside it, naming the fix', async () => {
    const { calls, logs } = await runLate(null, 0);
    const warning = logs.find((entry) => entry.level === 'warn' && /no extend\(\)/.test(entry.message));
    expect(warning?.message).toContain('Implement extend(eventId, token, { leaseMs }) in the store');
    expect(calls.complete).toBe(1);
  });

  it('when extend() answers false (the lease is gone): warns once and stops extending', async () => {
    const { calls, logs } = await runLate(() => false, 3 * TIMEOUTS.leaseMs);
    expect(calls.extend).toBe(1);
    expect(logs.filter((entry) => /the lease ended while a handler/.test(entry.message))).toHaveLength(1);
  });

  it('when extend() fails: logs store_unavailable and tries again at the next beat', async () => {
    const { calls, logs } = await runLate(() => {
      throw new Error('connection reset');
    }, 3 * TIMEOUTS.leaseMs);
    expect(calls.extend).toBeGreaterThanOrEqual(2);
    const failures = logs.filter((entry) => /extending the lease/.test(entry.message));
    expect(failures.length).toBe(calls.extend);
    expect(failures[0]).toMatchObject({ level: 'error', code: 'store_unavailable' });
    expect(JSON.stringify(failures[0])).not.toContain(SECRET);
  });

  it('when extend() answers no boolean: logs store_unavailable and stops extending', async () => {
    const { calls, logs } = await runLate(() => 'yes' as never, 2 * TIMEOUTS.leaseMs);
    expect(calls.extend).toBe(1);
    expect(logs.filter((entry) => /answered extend\(\)/.test(entry.message))).toMatchObject([
      { level: 'error', code: 'store_unavailable' },
    ]);
  });
});
