// A claim that lands after storeTimeoutMs (issue 11 §5, mutation survivors): only an answer that really acquired the
// event, with a string token, is handed back with release(); any other late answer (a duplicate, a malformed one,
// null) is left alone and never becomes an unhandled rejection.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../testing/src/index.js';
import type { DedupeStore } from './dedupe.js';
import { createReceiver } from './receiver.js';

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

/** Delivers one event to a receiver whose store answers claim() with `late`, after the deadline; returns release's calls. */
async function deliverWithLateClaim(late: unknown) {
  const release = vi.fn(async () => true);
  const store: DedupeStore = {
    claim: () => new Promise((resolve) => setTimeout(() => resolve(late as never), LANDS_AFTER_MS)),
    complete: async () => true,
    release,
  };
  const receiver = createReceiver({ secrets: { '1': 'endpoint-secret' }, store, storeTimeoutMs: STORE_TIMEOUT_MS, handlerTimeoutMs: 100, leaseMs: 1_000 });
  const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
  const result = await receiver.receive({ method: 'POST', headers, body });
  // Past the late answer, and a turn more for the give-back it may start.
  await new Promise((resolve) => setTimeout(resolve, LANDS_AFTER_MS * 2));
  return { code: result.code, releases: release.mock.calls as unknown[][] };
}

describe('a claim answered after storeTimeoutMs', () => {
  it('is released with its token when it acquired the event', async () => {
    const { code, releases } = await deliverWithLateClaim({ status: 'acquired', token: 'late-token' });
    expect({ code, tokens: releases.map((call) => call[1]) }).toEqual({ code: 'store_unavailable', tokens: ['late-token'] });
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
    expect({ code, releases: releases.length, unhandled: unhandled.length }).toEqual({ code: 'store_unavailable', releases: 0, unhandled: 0 });
  });
});
