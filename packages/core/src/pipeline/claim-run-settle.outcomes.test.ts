// What the receiver does around a delivery's outcome: what it asks of the store, what it logs at which level, what
// onError handlers learn and what a handler's context carries. One case per test; each pins a branch that mutation
// testing found unguarded.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimResult, DedupeStore } from '../store/dedupe.js';
import { HandlerError } from './dispatch.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '3': 'outcome-secret-v3' } });
});

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '3': 'outcome-secret-v3' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: (entry) => logs.push(entry),
    ...overrides,
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, logs };
}

/** A memory store whose calls are recorded and whose answers a test may replace. */
function spyStore(answers: { complete?: unknown; release?: unknown } = {}) {
  const memory = createMemoryStore({ now: () => NOW });
  const calls: { method: string; options?: unknown }[] = [];
  const store: DedupeStore = {
    claim: (id, options): ClaimResult | Promise<ClaimResult> => {
      calls.push({ method: 'claim', options });
      return memory.claim(id, options);
    },
    complete: async (id, token, options) => {
      calls.push({ method: 'complete', options });
      const done = await memory.complete(id, token, options);
      return ('complete' in answers ? answers.complete : done) as boolean;
    },
    release: async (id, token) => {
      calls.push({ method: 'release' });
      const released = await memory.release(id, token);
      return ('release' in answers ? answers.release : released) as boolean;
    },
  };
  return { store, calls };
}

describe('store options', () => {
  it('claims with the default lease of 60 s and completes with the default retention of 30 days', async () => {
    const { store, calls } = spyStore();
    const { receiver, deliver } = setup({ store });
    receiver.onAny(() => {});
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(calls).toEqual([
      { method: 'claim', options: { leaseMs: 60_000 } },
      { method: 'complete', options: { retainMs: 30 * 24 * 3600_000 } },
    ]);
  });

  it('passes leaseMs and retainMs as configured', async () => {
    const { store, calls } = spyStore();
    const { deliver } = setup({
      store,
      leaseMs: 5_000,
      retainMs: 86_400_000,
      handlerTimeoutMs: 1_000,
      storeTimeoutMs: 500,
    } as Partial<ReceiverOptions>);
    await deliver(testEvents.dataRequestPendingApproval());
    expect(calls.map((call) => call.options)).toEqual([{ leaseMs: 5_000 }, { retainMs: 86_400_000 }]);
  });
});

describe('settling', () => {
  it('acknowledges, and warns to raise leaseMs, when complete() says the lease was lost', async () => {
    const { store } = spyStore({ complete: false });
    const { deliver, logs } = setup({ store });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringMatching(/leaseMs/) }));
  });

  it('logs no warning when complete() confirms the lease', async () => {
    const { store } = spyStore();
    const { deliver, logs } = setup({ store });
    await deliver(testEvents.dataRequestPendingApproval());
    expect(logs.filter((entry) => entry.level === 'warn' || entry.level === 'error')).toEqual([]);
  });

  it('logs an error when release() answers something other than a boolean, and still answers 500', async () => {
    const { store } = spyStore({ release: 'yes' });
    const { receiver, deliver, logs } = setup({ store });
    receiver.onAny(() => {
      throw new Error('handler down');
    });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(500);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: expect.stringMatching(/^release failed/),
        code: 'store_unavailable',
      }),
    );
  });

  it('logs no release error when release() answers a boolean', async () => {
    const { store } = spyStore();
    const { receiver, deliver, logs } = setup({ store });
    receiver.onAny(() => {
      throw new Error('handler down');
    });
    await deliver(testEvents.dataRequestPendingApproval());
    expect(logs.filter((entry) => /^release failed/.test(entry.message))).toEqual([]);
  });
});

// A store that answers with values rather than promises (the built-in memory store, or a custom in-process one) is
// used without a promise or a deadline timer (claim-run-settle.ts): these pin that this path keeps every outcome of
// the store, and that a method replaced by a promise-returning one gets its deadline back.
describe('a store that answers synchronously', () => {
  it('warns to raise leaseMs when the lease ran out while the handler ran', async () => {
    let now = NOW;
    const store = createMemoryStore({ now: () => now });
    const { receiver, deliver, logs } = setup({ store });
    receiver.onAny(() => {
      now += 60_001; // past the default lease of 60 s
    });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/raise leaseMs/) }),
    );
  });

  it('logs a clock that throws while completing as store_unavailable, and still acknowledges the handled event', async () => {
    let throwAt = Number.POSITIVE_INFINITY;
    let calls = 0;
    const store = createMemoryStore({
      now: () => {
        if (++calls >= throwAt) throw new Error('clock down');
        return NOW;
      },
    });
    const { receiver, deliver, logs } = setup({ store });
    receiver.onAny(() => {
      throwAt = calls + 1;
    });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        code: 'store_unavailable',
        message: expect.stringMatching(/^complete failed after the handlers succeeded/),
      }),
    );
  });

  it('calls a claim() replaced after the receiver was created', async () => {
    const store: StreamCursorStore = createMemoryStore({ now: () => NOW });
    const { receiver, deliver } = setup({ store });
    const handler = vi.fn();
    receiver.onAny(handler);
    store.claim = async () => ({ status: 'completed' });
    const result = await deliver(testEvents.dataRequestPendingApproval());
    expect([result.status, result.code]).toEqual([200, 'duplicate']);
    expect(handler).not.toHaveBeenCalled();
  });

  it('calls a complete() replaced after the receiver was created', async () => {
    const store: StreamCursorStore = createMemoryStore({ now: () => NOW });
    const { receiver, deliver, logs } = setup({ store });
    receiver.onAny(() => {});
    const complete = vi.fn(async () => false);
    store.complete = complete;
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(complete).toHaveBeenCalledOnce();
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/raise leaseMs/) }),
    );
  });

  it.for([
    { method: 'claim', ordering: undefined },
    {
      method: 'getCursor',
      ordering: streamOrdering({ mode: 'enforce' as const, fetchEventsAfter: async function* () {} }),
    },
  ] as const)(
    'answers 503 store_unavailable within storeTimeoutMs when a $method() replaced on it never settles',
    async ({ method, ordering }) => {
      const store: StreamCursorStore = createMemoryStore({ now: () => NOW });
      const { receiver, deliver } = setup({
        store,
        storeTimeoutMs: 50,
        handlerTimeoutMs: 100,
        leaseMs: 1_000,
        ...(ordering ? { ordering } : {}),
      });
      const handler = vi.fn();
      receiver.onAny(handler);
      store[method] = () => new Promise<never>(() => {});
      const event = testEvents.dataRequestPendingApproval();
      const result = await deliver(event);
      expect([result.status, result.code]).toEqual([503, 'store_unavailable']);
      // The verified event stays on the result, as for every answer after verification (onResult, telemetry).
      expect(result.event?.event_id).toBe(event.event_id);
      expect(handler).not.toHaveBeenCalled();
    },
  );

  /** A custom in-process store: the memory store's answers, given as values, or the answers a test sets. */
  function synchronousStore(answers: { claim?: unknown; complete?: unknown } = {}) {
    const memory = createMemoryStore({ now: () => NOW });
    const store: DedupeStore = {
      claim: (id, options) => ('claim' in answers ? answers.claim : memory.claim(id, options)) as ClaimResult,
      complete: (id, token, options) =>
        ('complete' in answers ? answers.complete : memory.complete(id, token, options)) as boolean,
      release: (id, token) => memory.release(id, token),
    };
    return store;
  }

  /** The delays of the timers armed while `work` ran. */
  async function timersArmedDuring(work: () => Promise<unknown>): Promise<unknown[]> {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      await work();
      return setTimeoutSpy.mock.calls.map((call) => call[1]);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  }

  it('runs the handler once per event with a custom store that answers with values, and answers the retry duplicate', async () => {
    const { receiver, deliver } = setup({ store: synchronousStore() });
    const handler = vi.fn();
    receiver.onAny(handler);
    const envelope = testEvents.dataRequestPendingApproval();
    expect((await deliver(envelope)).status).toBe(200);
    const retry = await deliver(envelope);
    expect([retry.status, retry.code]).toEqual([200, 'duplicate']);
    expect(handler).toHaveBeenCalledOnce();
  });

  it('arms no storeTimeoutMs timer for a store that answers with values or settled promises, and one, shared by its calls, for a store whose answers are still pending', async () => {
    const storeTimeoutMs = 4_321;
    const memory = createMemoryStore({ now: () => NOW });
    /** The memory store's answer, a turn of the event loop later (as from a database). */
    const later = <T>(answer: () => T) => new Promise<T>((resolve) => setImmediate(() => resolve(answer())));
    const settled: DedupeStore = {
      claim: async (id, options) => memory.claim(id, options),
      complete: async (id, token, options) => memory.complete(id, token, options),
      release: async (id, token) => memory.release(id, token),
    };
    const pending: DedupeStore = {
      claim: (id, options) => later(() => memory.claim(id, options)),
      complete: (id, token, options) => later(() => memory.complete(id, token, options)),
      release: (id, token) => later(() => memory.release(id, token)),
    };
    const delaysOf = async (store: DedupeStore) => {
      const { receiver, deliver } = setup({ store, storeTimeoutMs });
      receiver.onAny(() => {});
      const delays = await timersArmedDuring(() => deliver(testEvents.dataRequestPendingApproval()));
      return delays.filter((delay) => delay === storeTimeoutMs);
    };
    expect(await delaysOf(synchronousStore())).toEqual([]);
    expect(await delaysOf(settled)).toEqual([]);
    expect(await delaysOf(pending)).toEqual([storeTimeoutMs]);
  });

  const failingSynchronousClaims: [string, () => DedupeStore][] = [
    [
      'throws (a memory store whose clock throws)',
      () =>
        createMemoryStore({
          now: () => {
            throw new Error('clock down');
          },
        }),
    ],
    ['answers outside the contract', () => synchronousStore({ claim: { status: 'duplicate' } })],
  ];
  it.each(failingSynchronousClaims)(
    'answers 503 store_unavailable, running no handler, when a synchronous claim %s',
    async (_, store) => {
      const { receiver, deliver } = setup({ store: store() });
      const handler = vi.fn();
      receiver.onAny(handler);
      const result = await deliver(testEvents.dataRequestPendingApproval());
      expect([result.status, result.code]).toEqual([503, 'store_unavailable']);
      expect(handler).not.toHaveBeenCalled();
    },
  );

  // The pipeline reads an answer's `then` to tell a promise from a value: nothing at all must still be judged as an
  // answer outside the contract, not fail on the read.
  it.each([undefined, null])(
    'answers 503 store_unavailable saying what the store answered when a synchronous claim answers %s',
    async (answer) => {
      const { receiver, deliver, logs } = setup({ store: synchronousStore({ claim: answer }) });
      receiver.onAny(() => {});
      expect((await deliver(testEvents.dataRequestPendingApproval())).code).toBe('store_unavailable');
      expect(logs.find((entry) => entry.code === 'store_unavailable')?.detail).toMatch(/^the store answered claim\(\)/);
    },
  );

  it.each([undefined, null])(
    'acknowledges a handled event and logs what the store answered when a synchronous complete answers %s',
    async (answer) => {
      const { receiver, deliver, logs } = setup({ store: synchronousStore({ complete: answer }) });
      receiver.onAny(() => {});
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
      expect(logs).toContainEqual(
        expect.objectContaining({
          code: 'store_unavailable',
          message: expect.stringMatching(/complete\(\) with something other than a boolean/),
        }),
      );
    },
  );

  it('acknowledges a handled event and logs store_unavailable when a synchronous complete answers outside the contract', async () => {
    const { receiver, deliver, logs } = setup({ store: synchronousStore({ complete: 'yes' }) });
    receiver.onAny(() => {});
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        code: 'store_unavailable',
        message: expect.stringMatching(/complete\(\) with something other than a boolean/),
      }),
    );
  });

  it('calls a complete() replaced while the handler ran', async () => {
    const store: StreamCursorStore = createMemoryStore({ now: () => NOW });
    const { receiver, deliver } = setup({ store });
    const complete = vi.fn(async () => true);
    receiver.onAny(() => {
      store.complete = complete;
    });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    expect(complete).toHaveBeenCalledOnce();
  });
});

describe('log levels', () => {
  it('logs an authentication failure (401) as a warning', async () => {
    const { receiver, logs } = setup();
    const signed = await signer.sign(testEvents.dataRequestPendingApproval(), { secret: 'forged' });
    await receiver.receive({ method: 'POST', headers: signed.headers, body: signed.body });
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', code: 'signature_mismatch', status: 401 }));
  });

  it('logs a handler failure (500) as an error', async () => {
    const { receiver, deliver, logs } = setup();
    receiver.onAny(() => {
      throw new Error('handler down');
    });
    await deliver(testEvents.dataRequestPendingApproval());
    expect(logs).toContainEqual(expect.objectContaining({ level: 'error', code: 'handler_failed', status: 500 }));
  });

  it('logs a duplicate at info with code duplicate', async () => {
    const { deliver, logs } = setup();
    const envelope = testEvents.dataRequestPendingApproval();
    await deliver(envelope);
    await deliver(envelope);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', code: 'duplicate', status: 200, eventId: envelope.event_id }),
    );
  });

  it('logs a processed delivery at debug with its event id and type', async () => {
    const { deliver, logs } = setup();
    const envelope = testEvents.dataRequestPendingApproval();
    await deliver(envelope);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'debug',
        status: 200,
        eventId: envelope.event_id,
        eventType: 'kyb.data_request.pending_approval',
      }),
    );
  });
});

describe('onError', () => {
  it('receives a HandlerError naming the event and listing the error the handler threw', async () => {
    const { receiver, deliver } = setup();
    const thrown = new Error('handler down');
    const seen: HandlerError[] = [];
    receiver.onAny(() => {
      throw thrown;
    });
    receiver.onError((error) => {
      seen.push(error);
    });
    const envelope = testEvents.dataRequestPendingApproval();
    await deliver(envelope);
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    expect(seen[0]).toBeInstanceOf(HandlerError);
    expect(seen[0]).toMatchObject({
      eventType: 'kyb.data_request.pending_approval',
      eventId: envelope.event_id,
      errors: [thrown],
    });
  });

  it('reports a handler that fails after its deadline once, as the timeout, not again as a failure', async () => {
    const { receiver, deliver } = setup({ handlerTimeoutMs: 20 });
    const seen: HandlerError[] = [];
    let failLate: (error: Error) => void = () => {};
    receiver.onAny(() => new Promise<void>((_, reject) => (failLate = reject)));
    receiver.onError((error) => {
      seen.push(error);
    });
    const result = await deliver(testEvents.dataRequestPendingApproval());
    expect([result.status, result.code]).toEqual([503, 'handler_timeout']);
    failLate(new Error('late failure'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toHaveLength(1);
    expect((seen[0]!.errors[0] as Error).name).toBe('TimeoutError');
  });

  // A handler's result is read as a thenable inside the handler runner's try: a `then` getter that throws, or a
  // `then` that throws when called, is the handler's failure.
  const throwingThenables: [string, (thrown: Error) => object][] = [
    [
      'whose then getter throws',
      (thrown) => ({
        get then(): never {
          throw thrown;
        },
      }),
    ],
    [
      'whose then() throws when called',
      (thrown) => ({
        then(): never {
          throw thrown;
        },
      }),
    ],
  ];
  it.each(throwingThenables)(
    'receives, as a handler failure, a result %s; the retry runs the handler again',
    async (_, result) => {
      const { receiver, deliver } = setup();
      const thrown = new Error('then down');
      const seen: HandlerError[] = [];
      let runs = 0;
      receiver.onAny(() => {
        runs += 1;
        if (runs === 1) return result(thrown);
      });
      receiver.onError((error) => {
        seen.push(error);
      });
      const envelope = testEvents.dataRequestPendingApproval();
      const first = await deliver(envelope);
      expect([first.status, first.code]).toEqual([500, 'handler_failed']);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ errors: [thrown] });
      const retry = await deliver(envelope);
      expect([retry.status, retry.code, runs]).toEqual([200, undefined, 2]);
    },
  );
});

describe('handler context', () => {
  it('gives a release handler its answers', async () => {
    const { receiver, deliver } = setup();
    const contexts: Record<string, unknown>[] = [];
    receiver.on('kyb.data_request.released', (_event, context) => {
      contexts.push(context as unknown as Record<string, unknown>);
    });
    await deliver(testEvents.dataRequestReleased());
    expect((contexts[0]!['answers'] as { size: number }).size).toBeGreaterThan(0);
  });

  it('gives an attested wallet change its claims but no answers', async () => {
    const { receiver, deliver } = setup();
    const contexts: Record<string, unknown>[] = [];
    receiver.on('kyb.business.wallet_address_changed', (_event, context) => {
      contexts.push(context as unknown as Record<string, unknown>);
    });
    await deliver(testEvents.businessWalletAddressChanged());
    expect(contexts[0]!['claims']).toBeDefined();
    expect(contexts[0]!['answers']).toBeUndefined();
  });

  it('gives an HMAC-only event neither claims nor answers', async () => {
    const { receiver, deliver } = setup();
    const contexts: Record<string, unknown>[] = [];
    receiver.on('kyb.data_request.refused', (_event, context) => {
      contexts.push(context as unknown as Record<string, unknown>);
    });
    await deliver(testEvents.dataRequestRefused());
    expect(contexts[0]!['claims']).toBeUndefined();
    expect(contexts[0]!['answers']).toBeUndefined();
  });
});
