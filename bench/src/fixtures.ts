/**
 * Deliveries for the benches, signed by the test kit exactly as the service signs them. Every delivery has its own
 * event_id and date-times (`withOwnTimes`). Signer and receivers share one fixed clock, so a pool signed at start-up
 * stays inside the 5-minute signature window and the attestation lifetime however long the run takes.
 */
import {
  createTestSigner,
  testEvents,
  type SignedDelivery,
  type TestEnvelope,
  type TestSigner,
} from '@kyb-webhooks/testing';

import { BENCH_NOW_MS } from './clock.js';

export { BENCH_NOW_MS, benchNow } from './clock.js';

/** HMAC only (`kyb.data_request.pending_approval`), or HMAC + RS256 attestation (`kyb.data_request.released`). */
export type EventKind = 'hmac' | 'attested';

export function createBenchSigner(): Promise<TestSigner> {
  return createTestSigner({ now: BENCH_NOW_MS });
}

/**
 * The event a bench sends of a kind: the test kit's, at the bench's clock, with times of its own for each `index` (see
 * `withOwnTimes`).
 *
 * @example
 * ```ts
 * const envelope = benchEvent('hmac', 7) // a pending request whose expires_at is 7 s after index 0's
 * ```
 */
export function benchEvent(kind: EventKind, index = 0): TestEnvelope {
  // On the bench's clock, so a pool is the same from one run to the next (an instruction count depends on the bytes).
  const at = { timestamp: BENCH_NOW_MS / 1000 };
  const envelope = kind === 'hmac' ? testEvents.dataRequestPendingApproval(at) : testEvents.dataRequestReleased(at);
  return withOwnTimes(envelope, index);
}

/**
 * The event with its own `expires_at` (a pending request) or `released_at` (released data): `index` seconds later or
 * earlier than the fixed clock's. Real events carry times of their own, and a receiver that remembers the last string
 * a pattern passed (as ours does for the event type) must not be measured on a pool that repeats one date-time.
 *
 * @example
 * ```ts
 * const tenth = withOwnTimes(template, 10) // expires_at 10 s after the template's
 * ```
 */
export function withOwnTimes(envelope: TestEnvelope, index: number): TestEnvelope {
  const data = envelope.data as Record<string, unknown>;
  const moved = (field: string, byMs: number) =>
    typeof data[field] === 'string' ? { [field]: new Date(Date.parse(data[field]) + byMs).toISOString() } : {};
  return {
    ...envelope,
    data: { ...data, ...moved('expires_at', index * 1000), ...moved('released_at', -index * 1000) },
  };
}

const encoder = new TextEncoder();
const byteLength = (text: string): number => encoder.encode(text).byteLength;

interface PaddingItem {
  field: string;
  value: string;
  checked_at: string;
  ok: boolean;
}

function paddingItem(i: number): PaddingItem {
  return {
    field: `note_${String(i).padStart(5, '0')}`,
    value: 'Registered office confirmed against the register extract',
    checked_at: '2026-01-01T00:00:00.000Z',
    ok: i % 3 !== 0,
  };
}

/**
 * The envelope with extra `data` fields (kept by the schemas: the service adds fields without notice) so that it
 * serializes to exactly `targetBytes`: an array of small records, like a real payload, then a filler string for the
 * last bytes. An envelope already larger than the target is returned as is.
 */
export function padEnvelope(envelope: TestEnvelope, targetBytes: number): TestEnvelope {
  const withPadding = (items: PaddingItem[], fill: string): TestEnvelope => ({
    ...envelope,
    data: { ...envelope.data, bench_padding: items, bench_fill: fill },
  });
  let size = byteLength(JSON.stringify(withPadding([], '')));
  if (size > targetBytes) return envelope;
  const items: PaddingItem[] = [];
  for (let i = 0; ; i++) {
    const item = paddingItem(i);
    const added = byteLength(JSON.stringify(item)) + (items.length > 0 ? 1 : 0);
    if (size + added > targetBytes) break;
    items.push(item);
    size += added;
  }
  const padded = withPadding(items, 'x'.repeat(targetBytes - size));
  const actual = byteLength(JSON.stringify(padded));
  if (actual !== targetBytes) throw new Error(`padding produced ${actual} bytes, wanted ${targetBytes}`);
  return padded;
}

/**
 * `count` signed deliveries of one kind, each with a fresh event_id, padded to `targetBytes` when given (the
 * attestation is made first, so the padding counts it; it covers the ids, not `data`). RS256 signing goes through
 * Web Crypto's thread pool, so batches run concurrently.
 */
export async function signPool(
  signer: TestSigner,
  kind: EventKind,
  count: number,
  targetBytes?: number,
): Promise<SignedDelivery[]> {
  let index = 0;
  const one = async (): Promise<SignedDelivery> => {
    const carried = await signer.withAttestation(benchEvent(kind, index++));
    return signer.sign(targetBytes === undefined ? carried : padEnvelope(carried, targetBytes));
  };
  const pool: SignedDelivery[] = [];
  const batch = kind === 'attested' ? 32 : 256;
  while (pool.length < count) {
    const n = Math.min(batch, count - pool.length);
    pool.push(...(await Promise.all(Array.from({ length: n }, one))));
  }
  return pool;
}

/** Hands out pool entries in order and fails loudly when a bench would reuse one (dedupe would answer it). */
export function cursor<T>(pool: readonly T[], label: string): () => T {
  let next = 0;
  return () => {
    const item = pool[next++];
    if (item === undefined)
      throw new Error(`pool "${label}" exhausted after ${pool.length} items; size it with plannedCalls()`);
    return item;
  };
}
