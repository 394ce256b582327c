/**
 * Part 1: what `ordering: streamOrdering({ mode: 'enforce' })` costs per event on the happy path. Three receivers share one store,
 * each through its own counting proxy: ordering off, enforce on streams already under way (the cursor exists), and
 * enforce where every event is the first of its stream (no cursor yet: a data request's stream has only a handful of
 * events, so this path is common, and some stores take it differently). All get in-order deliveries one at a time,
 * in paired interleaved rounds of the same number of events, so every round gives each enforce case one ratio and one
 * difference against off measured under the same conditions. Store calls are counted in the timed rounds only, so a
 * one-off (a Redis script loaded on first use) does not show as a per-event cost.
 */
import { createReceiver, type Receiver, type StreamCursorStore, streamOrdering } from '@kyb-webhooks/core';
import { testEvents, type SignedDelivery, type TestSigner } from '@kyb-webhooks/testing';
import { performance } from 'node:perf_hooks';
import { BENCH_NOW_MS, benchNow, cursor } from '../fixtures.js';
import { measure, medianInterval, median, plannedCalls, type Candidate, type HarnessOptions } from '../harness.js';
import type { StreamBackend } from './backends.js';
import { countingStore, diffCounts, perEvent, totalCalls, type CallCounts } from './counting.js';

/** Streams the continuing deliveries rotate over, so consecutive events touch different cursors, as in production. */
const STREAMS = 64;

export type CostCase = 'off' | 'continuing' | 'first';
const CASES: readonly CostCase[] = ['off', 'continuing', 'first'];

export interface Interval {
  median: number;
  low: number | undefined;
  high: number | undefined;
}

export interface CaseResult {
  /** Median µs per event over the rounds. */
  us: number;
  /** Against off, per round (off itself: 1 and 0). */
  ratio: Interval;
  diff: Interval;
  /** Store calls per event, by method (exact: every event of a case takes the same path). */
  calls: CallCounts;
  callsPerEvent: number;
  /** Client calls per event at the wire, when the backend counts them. */
  wirePerEvent: number | undefined;
}

export interface CostResult {
  backend: StreamBackend;
  cases: Record<CostCase, CaseResult>;
  rounds: number;
  eventsPerRound: number;
}

export function interval(values: readonly number[]): Interval {
  const ci = medianInterval(values);
  return { median: median(values), low: ci?.low, high: ci?.high };
}

async function receiveOk(receiver: Receiver, delivery: SignedDelivery): Promise<void> {
  const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
  if (result.status !== 200 || result.code !== undefined)
    throw new Error(`receive answered ${result.status} ${result.code ?? ''}`);
}

function costReceiver(signer: TestSigner, store: StreamCursorStore, enforce: boolean): Receiver {
  const receiver = createReceiver({
    secrets: signer.secrets,
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: benchNow,
    store,
    ordering: enforce
      ? streamOrdering({
          mode: 'enforce',
          // In-order deliveries never leave a gap; a call here means the pool is not in order, so the run fails.
          fetchEventsAfter: () => {
            throw new Error('an in-order delivery made the receiver backfill');
          },
        })
      : { mode: 'off' },
  });
  return receiver.on('kyb.data_request.pending_approval', async () => {});
}

/**
 * `count` deliveries in order. HMAC-only events (pending approval): without RS256 work per event, the ordering's
 * share of the time is at its largest. `continuing`: delivery i is seq ⌊i / STREAMS⌋ of stream i mod STREAMS;
 * `first`: every delivery is seq 0 of a stream of its own.
 */
async function inOrderPool(
  signer: TestSigner,
  count: number,
  label: string,
  shape: 'continuing' | 'first',
): Promise<SignedDelivery[]> {
  const timestamp = Math.floor(BENCH_NOW_MS / 1000);
  const one = (i: number): Promise<SignedDelivery> =>
    signer.sign(
      testEvents.dataRequestPendingApproval(
        shape === 'first'
          ? { stream_id: `dr_${label}_${i}`, seq: 0, timestamp }
          : { stream_id: `dr_${label}_${i % STREAMS}`, seq: Math.floor(i / STREAMS), timestamp },
      ),
    );
  const pool: SignedDelivery[] = [];
  while (pool.length < count) {
    const start = pool.length;
    pool.push(...(await Promise.all(Array.from({ length: Math.min(256, count - start) }, (_, k) => one(start + k)))));
  }
  return pool;
}

export function costOptions(quick: boolean): HarnessOptions {
  // 6 rounds is the fewest that give a 95% interval for a median (it is then [min, max]).
  return quick ? { rounds: 6, roundMs: 30, warmupMs: 0 } : { rounds: 15, roundMs: 200, warmupMs: 0 };
}

export async function measureOrderingCost(
  backend: StreamBackend,
  signer: TestSigner,
  options: HarnessOptions,
  progress: (line: string) => void,
): Promise<CostResult> {
  const namespace = await backend.open('cost');
  try {
    const counting = Object.fromEntries(CASES.map((key) => [key, countingStore(namespace.store)])) as Record<
      CostCase,
      ReturnType<typeof countingStore>
    >;
    const receivers = Object.fromEntries(
      CASES.map((key) => [key, costReceiver(signer, counting[key].store, key !== 'off')]),
    ) as Record<CostCase, Receiver>;

    // Size the rounds on the slowest case (first events): 20 events to warm up, 20 timed.
    const probe = await inOrderPool(signer, 40, 'probe', 'first');
    for (const delivery of probe.slice(0, 20)) await receiveOk(receivers.first, delivery);
    const started = performance.now();
    for (const delivery of probe.slice(20)) await receiveOk(receivers.first, delivery);
    const perEventMs = (performance.now() - started) / 20;
    // At least 30 events a round, so a round is never one or two slow calls.
    const iterations = Math.max(30, Math.min(5000, Math.round(options.roundMs / perEventMs)));
    const sizing = { iterations, warmupIterations: iterations };

    const callIndex = Object.fromEntries(CASES.map((key) => [key, 0])) as Record<CostCase, number>;
    const ops = { ...callIndex };
    const wire = { ...callIndex };
    const before: Partial<Record<CostCase, CallCounts>> = {};
    const candidates: Candidate[] = [];
    for (const key of CASES) {
      const pool = await inOrderPool(
        signer,
        plannedCalls(sizing, options) + STREAMS,
        key,
        key === 'first' ? 'first' : 'continuing',
      );
      const next = cursor(pool, `${backend.id} ${key}`);
      const receiver = receivers[key];
      // Continuing streams: their seq 0 is delivered now, so every timed event finds its stream's cursor.
      for (let i = 0; i < STREAMS; i++) await receiveOk(receiver, next());
      candidates.push({
        name: key,
        async: true,
        ...sizing,
        fn: async () => {
          const index = callIndex[key]++;
          if (index < sizing.warmupIterations) return receiveOk(receiver, next());
          if (index === sizing.warmupIterations) before[key] = counting[key].counts();
          // One delivery in flight: the wire calls made during this call are this case's.
          const wireBefore = backend.wire();
          await receiveOk(receiver, next());
          wire[key] += backend.wire() - wireBefore;
          ops[key]++;
        },
      });
    }
    progress(`${iterations} events per round, ${options.rounds} rounds`);
    const measured = await measure(candidates, options);
    const off = measured[0]!;
    const cases = {} as Record<CostCase, CaseResult>;
    CASES.forEach((key, index) => {
      const rounds = measured[index]!.roundsUs;
      const perCall = perEvent(diffCounts(counting[key].counts(), before[key] ?? {}), ops[key]);
      cases[key] = {
        us: measured[index]!.medianUs,
        ratio: interval(rounds.map((us, round) => us / off.roundsUs[round]!)),
        diff: interval(rounds.map((us, round) => us - off.roundsUs[round]!)),
        calls: perCall,
        callsPerEvent: totalCalls(perCall),
        wirePerEvent: backend.wireLabel ? wire[key] / ops[key] : undefined,
      };
    });
    return { backend, cases, rounds: options.rounds, eventsPerRound: iterations };
  } finally {
    await namespace.dispose();
  }
}
