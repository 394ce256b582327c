/**
 * Issue 11 §5: stores and handlers cannot wedge a delivery. Store answers are validated, store calls and handlers
 * have deadlines shorter than the lease, handlers get an AbortSignal, and every delivery gets an answer.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimResult, DedupeStore } from '../store/dedupe.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

const never = <T>() => new Promise<T>(() => {});

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': 'endpoint-secret' },
    logger: (entry) => logs.push(entry),
    handlerTimeoutMs: 100,
    storeTimeoutMs: 50,
    leaseMs: 1_000,
    ...overrides,
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, logs };
}

/** A memory store with one call replaced. */
function storeWith(replacement: Partial<Record<keyof DedupeStore, (...args: never[]) => unknown>>): DedupeStore {
  const inner = createMemoryStore();
  return {
    claim: (replacement.claim as DedupeStore['claim']) ?? ((id, options) => inner.claim(id, options)),
    complete:
      (replacement.complete as DedupeStore['complete']) ?? ((id, token, options) => inner.complete(id, token, options)),
    release: (replacement.release as DedupeStore['release']) ?? ((id, token) => inner.release(id, token)),
  };
}

describe('store answers are validated', () => {
  it.each<[string, unknown]>([
    ["{ status: 'duplicate' }", { status: 'duplicate' }],
    ['{}', {}],
    ['true', true],
    ['null', null],
    ['undefined', undefined],
    ["{ status: 'acquired' } without a token", { status: 'acquired' }],
    ["{ status: 'acquired', token: '' }", { status: 'acquired', token: '' }],
    ["{ status: 'acquired', token: 42 }", { status: 'acquired', token: 42 }],
  ])('answers 503 store_unavailable and runs no handler when claim() answers %s', async (_name, answer) => {
    const handler = vi.fn();
    const { receiver, deliver } = setup({ store: storeWith({ claim: async () => answer }) });
    receiver.on('kyb.data_request.refused', handler);
    const result = await deliver(testEvents.dataRequestRefused());
    expect(result.status).toBe(503);
    expect(result.code).toBe('store_unavailable');
    expect(handler).not.toHaveBeenCalled();
  });

  it('answers 503 store_unavailable when claim() throws synchronously', async () => {
    const { deliver } = setup({
      store: storeWith({
        claim: () => {
          throw new Error('not connected');
        },
      }),
    });
    expect((await deliver(testEvents.dataRequestRefused())).code).toBe('store_unavailable');
  });

  it('acknowledges, and logs an error, when complete() answers something other than a boolean', async () => {
    const { deliver, logs } = setup({ store: storeWith({ complete: async () => 'yes' }) });
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect(logs.some((entry) => entry.level === 'error' && /complete\(\)/.test(entry.message))).toBe(true);
  });
});

describe('store calls have a deadline', () => {
  it('answers 503 store_unavailable within storeTimeoutMs when claim() never settles', async () => {
    const { deliver, logs } = setup({ store: storeWith({ claim: never }) });
    const started = Date.now();
    const result = await deliver(testEvents.dataRequestRefused());
    expect(result.code).toBe('store_unavailable');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(logs.find((entry) => entry.code === 'store_unavailable')?.detail).toMatch(
      /did not settle within storeTimeoutMs/,
    );
  });

  it('gives back a claim that lands after the deadline, so the retry is not held for a whole lease', async () => {
    const inner = createMemoryStore();
    let lateClaims = 0;
    const store = storeWith({
      claim: async (id: never, options: never): Promise<ClaimResult> => {
        if (lateClaims++ === 0) await new Promise((resolve) => setTimeout(resolve, 150));
        return inner.claim(id, options);
      },
      release: (id: never, token: never) => inner.release(id, token),
    });
    const { deliver } = setup({ store });
    const envelope = testEvents.dataRequestRefused();
    expect((await deliver(envelope)).code).toBe('store_unavailable');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await deliver(envelope)).status).toBe(200);
  });

  it('answers 200 when complete() never settles after the handler succeeded, and logs it', async () => {
    const { deliver, logs } = setup({ store: storeWith({ complete: never }) });
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect(logs.some((entry) => entry.level === 'error' && /storeTimeoutMs/.test(entry.message))).toBe(true);
  });

  it('answers 500 handler_failed when release() never settles after a handler failure', async () => {
    const { receiver, deliver } = setup({ store: storeWith({ release: never }) });
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('boom');
    });
    expect((await deliver(testEvents.dataRequestRefused())).code).toBe('handler_failed');
  });
});

describe('handlers have a deadline and an AbortSignal', () => {
  it('answers 503 handler_timeout within handlerTimeoutMs when a handler never settles, and aborts its signal', async () => {
    const { receiver, deliver } = setup();
    let signal: AbortSignal | undefined;
    receiver.on('kyb.data_request.refused', (_event, context) => {
      signal = context.signal;
      return never();
    });
    const result = await deliver(testEvents.dataRequestRefused());
    expect(result.status).toBe(503);
    expect(result.code).toBe('handler_timeout');
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as Error).name).toBe('TimeoutError');
  });

  it('keeps the event claimed while the late handler runs, so a redelivery does not run it concurrently', async () => {
    const { receiver, deliver } = setup();
    let running = 0;
    let concurrent = 0;
    let finish!: () => void;
    receiver.on('kyb.data_request.refused', async () => {
      running++;
      concurrent = Math.max(concurrent, running);
      await new Promise<void>((resolve) => (finish = resolve));
      running--;
    });
    const envelope = testEvents.dataRequestRefused();
    expect((await deliver(envelope)).code).toBe('handler_timeout');
    expect((await deliver(envelope)).code).toBe('in_progress');
    expect(concurrent).toBe(1);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The late success was recorded: the service's retry is a duplicate, not a second run.
    expect((await deliver(envelope)).code).toBe('duplicate');
  });

  it('frees the claim when the late handler fails, so the retry runs it again', async () => {
    const { receiver, deliver } = setup();
    let fail!: (error: Error) => void;
    const handler = vi.fn(() => new Promise<void>((_resolve, reject) => (fail = reject)));
    receiver.on('kyb.data_request.refused', handler);
    const envelope = testEvents.dataRequestRefused();
    expect((await deliver(envelope)).code).toBe('handler_timeout');
    fail(new Error('gave up'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    handler.mockImplementation(async () => {});
    expect((await deliver(envelope)).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('tells onError handlers about a timeout, and a hanging onError does not hang the delivery', async () => {
    const { receiver, deliver } = setup();
    const errors: unknown[] = [];
    receiver.on('kyb.data_request.refused', () => never());
    receiver.onError((error) => {
      errors.push(error);
      return never();
    });
    expect((await deliver(testEvents.dataRequestRefused())).code).toBe('handler_timeout');
    expect(errors).toHaveLength(1);
  });

  it('answers 500 handler_failed without waiting for a hanging onError handler', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('boom');
    });
    receiver.onError(() => never());
    expect((await deliver(testEvents.dataRequestRefused())).code).toBe('handler_failed');
  });

  it('gives synchronous handlers a signal that is not aborted', async () => {
    const { receiver, deliver } = setup();
    let aborted: boolean | undefined;
    receiver.on('kyb.data_request.refused', (_event, context) => {
      aborted = context.signal.aborted;
    });
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect(aborted).toBe(false);
  });
});
