// The log entry each delivery outcome leaves for operators (level, code, status, event id and type), on the unordered
// and the ordered path, and what a store failure's entry says about which store call failed and why.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimResult, DedupeStore } from '../store/dedupe.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const NOW = Date.UTC(2026, 10, 23, 8, 0, 0);
const SECRET = 'log-entries-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
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

const ordered = streamOrdering({ mode: 'enforce', fetchEventsAfter: async function* () {} });
const where = (event: TestEnvelope) => ({ eventId: event.event_id, eventType: event.event });

describe('an attestation-only receiver acknowledging a delivery it cannot authenticate', () => {
  it('logs it at info as unauthenticated, with its event id and type', async () => {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: (entry) => logs.push(entry),
    });
    const event = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(event, { attest: false });
    delete headers['service-kyb-signature'];
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('unauthenticated');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'info', code: 'unauthenticated', status: 200, ...where(event) }),
    ]);
  });
});

describe('with ordering on', () => {
  it('logs a processed delivery at debug with status 200 and its event id and type', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ ordering: ordered });
    expect((await deliver(event!)).status).toBe(200);
    expect(logs).toEqual([expect.objectContaining({ level: 'debug', status: 200, ...where(event!) })]);
  });

  it('logs a duplicate at info with code duplicate', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({ ordering: ordered });
    await deliver(event!);
    logs.length = 0;
    expect((await deliver(event!)).code).toBe('duplicate');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'info', code: 'duplicate', status: 200, ...where(event!) }),
    ]);
  });

  it('logs a late event that onGap took at info with code late', async () => {
    const store = createMemoryStore({ now: () => NOW });
    const events = testStream(3);
    const { receiver, deliver, logs } = setup({ ordering: ordered, store });
    receiver.onGap(() => {});
    await deliver(events[0]!);
    await store.advanceCursor(events[0]!.stream_id, 2);
    logs.length = 0;
    expect((await deliver(events[1]!)).code).toBe('late');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', code: 'late', status: 200, ...where(events[1]!) }),
    );
  });
});

/** A memory store with one method replaced. */
function storeWith(
  replace: Partial<Record<'claim' | 'complete' | 'release', (...args: never[]) => unknown>>,
): DedupeStore {
  const memory = createMemoryStore({ now: () => NOW });
  return {
    claim: (replace.claim ?? ((id, options) => memory.claim(id, options))) as (
      id: string,
      options: never,
    ) => Promise<ClaimResult>,
    complete: (replace.complete ??
      ((id, token, options) => memory.complete(id, token, options))) as DedupeStore['complete'],
    release: (replace.release ?? ((id, token) => memory.release(id, token))) as DedupeStore['release'],
  };
}
const never = () => new Promise<never>(() => {});

describe('a store failure names the store call and why it failed', () => {
  it.each<[string, DedupeStore, string]>([
    ['claim throws', storeWith({ claim: () => Promise.reject(new Error('connection reset')) }), 'claim failed'],
    [
      'claim throws a TypeError of its own',
      storeWith({ claim: () => Promise.reject(new TypeError('x is not a function')) }),
      'claim failed',
    ],
    [
      'claim answers something unexpected',
      storeWith({ claim: async () => ({ status: 'duplicate' }) }),
      'the store answered claim()',
    ],
    [
      'claim never settles',
      storeWith({ claim: never }),
      "the store's claim() did not settle within storeTimeoutMs (50 ms)",
    ],
  ])('%s: 503 store_unavailable, and the detail says so', async (_name, store, detail) => {
    const event = testEvents.dataRequestPendingApproval();
    const { deliver, logs } = setup({ store, storeTimeoutMs: 50 });
    expect((await deliver(event)).code).toBe('store_unavailable');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'error', code: 'store_unavailable', status: 503, ...where(event) }),
    ]);
    expect(logs[0]!.detail).toContain(detail);
  });

  it('logs a claim that timed out with the timeout error itself', async () => {
    const { deliver, logs } = setup({ store: storeWith({ claim: never }), storeTimeoutMs: 50 });
    await deliver(testEvents.dataRequestPendingApproval());
    expect((logs[0]!.error as { name?: unknown } | undefined)?.name).toBe('StoreTimeoutError');
  });

  it.each<[string, DedupeStore, Partial<LogEntry>, string]>([
    [
      'complete answers something other than a boolean',
      storeWith({ complete: async () => 'yes' }),
      { level: 'error', code: 'store_unavailable' },
      'the store answered complete() with something other than a boolean',
    ],
    [
      'complete throws',
      storeWith({ complete: () => Promise.reject(new Error('disk full')) }),
      { level: 'error', code: 'store_unavailable' },
      'complete failed after the handlers succeeded: complete failed; trying again in the background',
    ],
    [
      'complete never settles',
      storeWith({ complete: never }),
      { level: 'error', code: 'store_unavailable' },
      "complete failed after the handlers succeeded: the store's complete() did not settle within storeTimeoutMs (50 ms); trying again in the background",
    ],
  ])('after a handler succeeded, %s: 200, and an entry for the event', async (_name, store, fields, message) => {
    const event = testEvents.dataRequestPendingApproval();
    const { deliver, logs } = setup({ store, storeTimeoutMs: 50 });
    expect((await deliver(event)).status).toBe(200);
    const entry = logs.find((each) => each.level === 'error');
    expect(entry).toEqual(expect.objectContaining({ ...fields, message, ...where(event) }));
  });

  it.each<[string, DedupeStore, string]>([
    [
      'release answers something other than a boolean',
      storeWith({ release: async () => 'done' }),
      'the store answered release() with something other than a boolean',
    ],
    [
      'release never settles',
      storeWith({ release: never }),
      "the store's release() did not settle within storeTimeoutMs (50 ms)",
    ],
  ])('after a handler failed, %s: 500, and the entry carries why', async (_name, store, why) => {
    const event = testEvents.dataRequestPendingApproval();
    const { receiver, deliver, logs } = setup({ store, storeTimeoutMs: 50 });
    receiver.on('kyb.data_request.pending_approval', () => {
      throw new Error('handler failed');
    });
    expect((await deliver(event)).code).toBe('handler_failed');
    const entry = logs.find((each) => each.message.startsWith('release failed'));
    expect(entry).toEqual(expect.objectContaining({ level: 'error', code: 'store_unavailable', ...where(event) }));
    expect((entry!.error as { message?: unknown } | undefined)?.message).toBe(why);
  });
});

// The lines above pin level, code and status; an operator reads the message, so each acknowledgement's is pinned too.
describe('the message of each acknowledgement', () => {
  it('says a processed delivery was processed', async () => {
    const event = testEvents.dataRequestPendingApproval();
    const { deliver, logs } = setup();
    await deliver(event);
    expect(logs).toEqual([expect.objectContaining({ level: 'debug', message: 'delivery processed', ...where(event) })]);
  });

  it('says a duplicate was acknowledged', async () => {
    const event = testEvents.dataRequestPendingApproval();
    const { deliver, logs } = setup();
    await deliver(event);
    logs.length = 0;
    expect((await deliver(event)).code).toBe('duplicate');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'info', message: 'duplicate delivery acknowledged', ...where(event) }),
    ]);
  });

  it('says a late event was taken by the onGap handlers', async () => {
    const store = createMemoryStore({ now: () => NOW });
    const events = testStream(3);
    const { receiver, deliver, logs } = setup({ ordering: ordered, store });
    receiver.onGap(() => {});
    await deliver(events[0]!);
    await store.advanceCursor(events[0]!.stream_id, 2);
    logs.length = 0;
    expect((await deliver(events[1]!)).code).toBe('late');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'late event taken by the onGap handlers', code: 'late' }),
    );
  });

  it('says an unauthenticated delivery was acknowledged, and that only onUnauthenticated handlers ran', async () => {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: (entry) => logs.push(entry),
    });
    const { headers, body } = await signer.sign(testEvents.dataRequestPendingApproval(), { attest: false });
    delete headers['service-kyb-signature'];
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('unauthenticated');
    expect(logs.map((entry) => entry.message)).toEqual([
      'delivery without attestation acknowledged unauthenticated (no secrets configured); only onUnauthenticated handlers ran',
    ]);
  });
});
