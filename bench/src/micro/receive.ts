/**
 * A3: `receiver.receive()` end to end (limits, HMAC, parse, envelope, attestation, dedupe with the memory store,
 * dispatch to a no-op handler, settle), one fresh pre-signed delivery per call so dedupe never short-cuts.
 */
import { performance } from 'node:perf_hooks';
import {
  createMemoryStore,
  DEFAULT_LEASE_MS,
  DEFAULT_RETAIN_MS,
  type DedupeStore,
  type Receiver,
} from '@kyb-webhooks/core';
import type { SignedDelivery, TestSigner } from '@kyb-webhooks/testing';
import { benchNow, cursor, signPool, type EventKind } from '../fixtures.js';
import { plannedCalls, type Candidate, type HarnessOptions } from '../harness.js';
import { createBenchReceiver } from '../receiver.js';

export const MEMORY_STORE_CAP = 100_000;

async function receiveOk(receiver: Receiver, delivery: SignedDelivery): Promise<void> {
  const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
  if (result.status !== 200 || result.code !== undefined)
    throw new Error(`receive answered ${result.status} ${result.code ?? ''}`);
}

export interface PoolCandidate extends Candidate {
  bodyBytes: number;
}

/**
 * A candidate that receives `kind` deliveries of `targetBytes` through a fresh receiver. A short probe sets the
 * operations per round to about `roundMs`; the pool is then signed to exactly the number of calls planned.
 */
export async function receiveCandidate(
  name: string,
  signer: TestSigner,
  kind: EventKind,
  targetBytes: number | undefined,
  options: HarnessOptions,
  store?: DedupeStore,
): Promise<PoolCandidate> {
  const receiver = createBenchReceiver(
    { secrets: signer.secrets, issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    store,
  );
  // The first half of the probe warms up (JIT, key import, JWKS), the second half is timed.
  const probe = await signPool(signer, kind, 40, targetBytes);
  for (const delivery of probe.slice(0, 20)) await receiveOk(receiver, delivery);
  const start = performance.now();
  for (const delivery of probe.slice(20)) await receiveOk(receiver, delivery);
  const perOpMs = (performance.now() - start) / 20;
  const iterations = Math.max(5, Math.min(5000, Math.round(options.roundMs / perOpMs)));
  const candidate = { iterations, warmupIterations: Math.max(5, Math.round(iterations / 2)) };
  const pool = await signPool(signer, kind, plannedCalls(candidate, options), targetBytes);
  const next = cursor(pool, name);
  return {
    name,
    async: true,
    ...candidate,
    bodyBytes: pool[0]!.body.byteLength,
    fn: () => receiveOk(receiver, next()),
  };
}

/**
 * A memory store that has run at its default cap for a while, like a process after 200k deliveries: full, and with
 * as many evictions behind it as records in it (evicting one record per claim used to leave holes in the Map that
 * made every claim at the cap slower, up to ~100 µs; a store filled only to the cap did not show it).
 */
export async function fullMemoryStore(): Promise<DedupeStore> {
  const store = createMemoryStore({ now: benchNow });
  for (let i = 0; i < 2 * MEMORY_STORE_CAP; i++) {
    const id = `prefill-${i}`;
    const claim = await store.claim(id, { leaseMs: DEFAULT_LEASE_MS });
    if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs: DEFAULT_RETAIN_MS });
  }
  return store;
}
