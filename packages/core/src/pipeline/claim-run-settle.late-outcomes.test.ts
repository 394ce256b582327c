// Outcomes that arrive after a deadline (issue 11 §5, mutation survivors):
// - a claim that lands after storeTimeoutMs: only an answer that really acquired the event, with a string token, is
//   handed back with release(); any other late answer (a duplicate, a malformed one, null) is left alone;
// - a handler that outlived handlerTimeoutMs and then succeeded leaves a warning that its success was recorded;
// - an onError handler that rejects never becomes an unhandled rejection, and neither does any late answer.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import type { DedupeStore } from '../store/dedupe.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import { createMemoryStore } from '../store/memory-store.js';

const STORE_TIMEOUT_MS = 20;
const LANDS_AFTER_MS = 60;

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

/**
 * Delivers one event to a receiver whose store answers claim() with `late`, after the deadline; returns release's
 * calls, and the store calls its telemetry saw, by name.
 */
async function deliverWithLateClaim(late: unknown) {
  const release = vi.fn(async () => true);
  const traced: string[] = [];
  const store: DedupeStore = {
    claim: () => new Promise((resolve) => setTimeout(() => resolve(late as never), LANDS_AFTER_MS)),
    complete: async () => true,
    release,
  };
  const receiver = createReceiver({
    secrets: { '1': 'endpoint-secret' },
    store,
    storeTimeoutMs: STORE_TIMEOUT_MS,
    handlerTimeoutMs: 100,
    leaseMs: 1_000,
    telemetry: {
      around: (operation, trace, run) => {
        if (operation === 'store') traced.push((trace as { operation: string }).operation);
        return run();
      },
    },
  });
  const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
  const result = await receiver.receive({ method: 'POST', headers, body });
  // Past the late answer, and a turn more for the give-back it may start.
  await new Promise((resolve) => setTimeout(resolve, LANDS_AFTER_MS * 2));
  return { code: result.code, releases: release.mock.calls as unknown[][], traced };
}

describe('a claim answered after storeTimeoutMs', () => {
  it('is released with its token when it acquired the event', async () => {
    const { code, releases, traced } = await deliverWithLateClaim({ status: 'acquired', token: 'late-token' });
    expect({ code, tokens: releases.map((call) => call[1]), traced }).toEqual({
      code: 'store_unavailable',
      tokens: ['late-token'],
      traced: ['claim', 'release'],
    });
  });

  it.each<[string, unknown]>([
    ["{ status: 'duplicate' }", { status: 'duplicate' }],
    ["{ status: 'duplicate' } with a token", { status: 'duplicate', token: 'not-ours' }],
    ["{ status: 'acquired' } with a numeric token", { status: 'acquired', token: 42 }],
    ["{ status: 'acquired' } without a token", { status: 'acquired' }],
  ])('is not released when it answered %s', async (_case, late) => {
    const { code, releases } = await deliverWithLateClaim(late);
    expect({ code, releases: releases.length }).toEqual({ code: 'store_unavailable', releases: 0 });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
  ])('is ignored without an unhandled rejection when it answered %s', async (_case, late) => {
    const { code, releases } = await deliverWithLateClaim(late);
    expect({ code, releases: releases.length, unhandled: unhandled.length }).toEqual({
      code: 'store_unavailable',
      releases: 0,
      unhandled: 0,
    });
  });
});

/** The memory store, as it is (it answers synchronously), or behind promises as an I/O store answers. */
function storeOf(answers: 'synchronously' | 'with promises'): DedupeStore {
  const memory = createMemoryStore();
  if (answers === 'synchronously') return memory;
  return {
    claim: async (...args) => memory.claim(...args),
    complete: async (...args) => memory.complete(...args),
    release: async (...args) => memory.release(...args),
  };
}

function setup(answers: 'synchronously' | 'with promises' = 'synchronously') {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': 'endpoint-secret' },
    logger: (entry) => logs.push(entry),
    store: storeOf(answers),
    handlerTimeoutMs: 30,
    storeTimeoutMs: 50,
    leaseMs: 1_000,
  });
  const deliver = async () => {
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, logs };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The store's answer to complete() is read on two paths (claim-run-settle.ts), a synchronous one and a promise's.
describe.each(['synchronously', 'with promises'] as const)(
  'a handler that finishes after handlerTimeoutMs, the store answering %s',
  (answers) => {
    it('leaves a warning that its late success was recorded', async () => {
      const { receiver, deliver, logs } = setup(answers);
      let finish!: () => void;
      receiver.on('kyb.data_request.refused', () => new Promise<void>((resolve) => (finish = resolve)));
      expect((await deliver()).code).toBe('handler_timeout');
      finish();
      await sleep(20);
      expect(
        logs.filter(
          (entry) => entry.level === 'warn' && /finished later; its success was recorded/.test(entry.message),
        ),
      ).toHaveLength(1);
    });

    it('leaves no such warning for a handler that finished in time', async () => {
      const { receiver, deliver, logs } = setup(answers);
      receiver.on('kyb.data_request.refused', async () => {});
      expect((await deliver()).status).toBe(200);
      await sleep(20);
      expect(logs.filter((entry) => entry.level === 'warn')).toEqual([]);
    });
  },
);

describe('an onError handler that rejects', () => {
  it('changes nothing in the answer and raises no unhandled rejection', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('handler failed');
    });
    receiver.onError(async () => {
      throw new Error('onError failed too');
    });
    const result = await deliver();
    await sleep(20);
    expect({ code: result.code, unhandled: unhandled.length }).toEqual({ code: 'handler_failed', unhandled: 0 });
  });
});

describe('waitUntil after a failed claim', () => {
  async function deliverWithClaim(claim: DedupeStore['claim']) {
    const handed: Promise<unknown>[] = [];
    const receiver = createReceiver({
      secrets: { '1': 'endpoint-secret' },
      store: { claim, complete: async () => true, release: async () => true },
      storeTimeoutMs: STORE_TIMEOUT_MS,
      logger: false,
    });
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const result = await receiver.receive({
      method: 'POST',
      headers,
      body,
      waitUntil: (promise) => void handed.push(promise),
    });
    return { code: result.code, handed: handed.length };
  }

  it('gets the give-back of a claim that timed out, which may still land', async () => {
    expect(await deliverWithClaim(() => new Promise(() => {}))).toEqual({ code: 'store_unavailable', handed: 1 });
  });

  it('gets nothing for a claim that failed at once: nothing of it can land later', async () => {
    expect(await deliverWithClaim(() => Promise.reject(new Error('connection refused')))).toEqual({
      code: 'store_unavailable',
      handed: 0,
    });
  });
});
