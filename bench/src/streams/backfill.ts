/**
 * Part 2: backfill throughput. The local KYB service (test kit, 127.0.0.1, in this process) holds one stream of N
 * attested events, seq 1…N. In each round, on a fresh empty namespace of the store, a receiver under enforce gets
 * event N first: it backfills 1…N−1 through the client's `events` iterator (paged HTTP calls), verifies each
 * (attestation included), runs it, then runs N, and only then answers. Beside it, in the same round and through the
 * same receiver on another fresh namespace, the in-order throughput: the stream's first M events delivered one at a
 * time (HMAC + attestation), as the service would send them. Each round gives one backfill/in-order ratio.
 */
import { performance } from 'node:perf_hooks';
import { createKybClient, type KybClient } from '@kyb-webhooks/client';
import { createReceiver, type Receiver, streamOrdering } from '@kyb-webhooks/core';
import { startKybService, type KybService, type SignedDelivery, type TestSigner } from '@kyb-webhooks/testing';
import { benchNow } from '../fixtures.js';
import type { StreamBackend } from './backends.js';
import { countingStore, diffCounts, perEvent, type CallCounts } from './counting.js';
import { interval, type Interval } from './ordering-cost.js';

export interface BackfillOptions {
  /** Events in the stream (N): the receiver backfills N − 1 of them. */
  events: number;
  /** In-order deliveries per round for the receiver's own throughput (M ≤ N). */
  inOrderEvents: number;
  rounds: number;
}

export function backfillOptions(quick: boolean): BackfillOptions {
  // 10 rounds: the 95% interval of a median is then the 2nd … 9th ratio, so one round slowed by the machine no longer
  // decides it alone (with 6 it is the min … max, and Redis came out unsure on one low round).
  return quick ? { events: 500, inOrderEvents: 200, rounds: 2 } : { events: 10_000, inOrderEvents: 2_500, rounds: 10 };
}

/** The stream on the local service, the client that pages through it, and its events as signed deliveries. */
export interface BackfillStream {
  service: KybService;
  client: KybClient;
  streamId: string;
  /** Deliveries of seq 1…N in order, HMAC-signed by the bench signer, each carrying the service's attestation. */
  deliveries: SignedDelivery[];
  /** Events per page the service answers with (the client asks for its default). */
  pageSize: number;
  stop(): Promise<void>;
}

const PAGE_SIZE = 100;
const WALLETS = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'] as const;

/**
 * N events on one business stream: `kyb.business.wallet_address_changed`, attested by the service's key. A business
 * stream is the kind that lives long enough to reach thousands of events; a data request has a handful.
 */
export async function createBackfillStream(signer: TestSigner, events: number): Promise<BackfillStream> {
  // The service signs on the bench's pinned clock, so attestations stay valid however long the run takes.
  const service = await startKybService({ now: benchNow, seqBase: 1, eventsPageLimit: PAGE_SIZE });
  try {
    const streamId = 'biz_bench_backfill';
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      appends.push(
        service.changeBusinessWallet({ businessId: streamId, previous: WALLETS[i % 2]!, next: WALLETS[(i + 1) % 2]! }),
      );
    }
    await Promise.all(appends);
    const envelopes = service.request(streamId)!.events;
    const deliveries: SignedDelivery[] = [];
    for (let start = 0; start < envelopes.length; start += 256) {
      deliveries.push(
        ...(await Promise.all(envelopes.slice(start, start + 256).map((envelope) => signer.sign(envelope)))),
      );
    }
    const client = createKybClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
    return { service, client, streamId, deliveries, pageSize: PAGE_SIZE, stop: () => service.stop() };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

export interface BackfillResult {
  backend: StreamBackend;
  /** Events per second of each round. */
  backfillRounds: number[];
  inOrderRounds: number[];
  backfill: Interval;
  /** How long the delivery that revealed the gap waited for its answer (the whole backfill), ms. */
  answerMs: Interval;
  inOrder: Interval;
  /** backfill / in-order, per round. */
  ratio: Interval;
  /** Store calls per event, by method. */
  backfillCalls: CallCounts;
  inOrderCalls: CallCounts;
}

async function receiveOk(receiver: Receiver, delivery: SignedDelivery): Promise<void> {
  const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
  if (result.status !== 200 || result.code !== undefined)
    throw new Error(`receive answered ${result.status} ${result.code ?? ''}`);
}

export async function measureBackfill(
  backend: StreamBackend,
  stream: BackfillStream,
  signer: TestSigner,
  options: BackfillOptions,
  progress: (line: string) => void,
): Promise<BackfillResult> {
  const { service, client, deliveries } = stream;
  const n = options.events;
  const m = Math.min(options.inOrderEvents, n);
  let namespace = await backend.open('warm');
  const counting = countingStore(namespace.store);
  // Handlers check the order they are called in, so a round that ran anything out of order fails instead of counting.
  let expectedSeq = 1;
  let outOfOrder: string | undefined;
  const receiver = createReceiver({
    secrets: signer.secrets,
    attestation: { issuer: service.issuer, audience: service.audience, jwks: service.jwks },
    now: benchNow,
    store: counting.store,
    ordering: streamOrdering({
      mode: 'enforce',
      firstSeq: 1,
      fetchEventsAfter: (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal }),
    }),
  }).on('kyb.business.wallet_address_changed', async (event) => {
    if (event.seq !== expectedSeq) outOfOrder ??= `handler saw seq ${event.seq}, expected ${expectedSeq}`;
    expectedSeq = event.seq + 1;
  });

  const fresh = async (label: string): Promise<void> => {
    await namespace.dispose();
    namespace = await backend.open(label);
    counting.use(namespace.store);
    expectedSeq = 1;
    outOfOrder = undefined;
  };
  const checkHandled = (upTo: number, what: string): void => {
    if (outOfOrder !== undefined) throw new Error(`${what}: ${outOfOrder}`);
    if (expectedSeq !== upTo + 1)
      throw new Error(`${what}: handlers ran up to seq ${expectedSeq - 1}, expected ${upTo}`);
  };

  /** Delivers seq `upTo` first: the receiver backfills 1…upTo − 1, then runs it. */
  const backfillOnce = async (
    label: string,
    upTo: number,
  ): Promise<{ rate: number; ms: number; calls: CallCounts }> => {
    await fresh(label);
    const before = counting.counts();
    const started = performance.now();
    await receiveOk(receiver, deliveries[upTo - 1]!);
    const ms = performance.now() - started;
    checkHandled(upTo, 'backfill');
    return { rate: (upTo * 1000) / ms, ms, calls: diffCounts(counting.counts(), before) };
  };
  const inOrderOnce = async (label: string, count: number): Promise<{ rate: number; calls: CallCounts }> => {
    await fresh(label);
    const before = counting.counts();
    const started = performance.now();
    for (let i = 0; i < count; i++) await receiveOk(receiver, deliveries[i]!);
    const ms = performance.now() - started;
    checkHandled(count, 'in-order');
    return { rate: (count * 1000) / ms, calls: diffCounts(counting.counts(), before) };
  };

  try {
    // Warm-up: the JIT, the key import, pg's prepared plans, the HTTP connection pool.
    progress('warming up');
    await inOrderOnce('warm_i', Math.min(m, 500));
    await backfillOnce('warm_b', Math.min(n, 1_000));
    const backfillRounds: number[] = [];
    const answerMs: number[] = [];
    const inOrderRounds: number[] = [];
    const backfillCalls: Record<string, number> = {};
    const inOrderCalls: Record<string, number> = {};
    for (let round = 0; round < options.rounds; round++) {
      progress(`round ${round + 1} of ${options.rounds}`);
      // Alternate which runs first, so neither always follows the other's garbage or a table drop.
      const steps = [
        async () => {
          const { rate, ms, calls } = await backfillOnce(`b${round}`, n);
          backfillRounds.push(rate);
          answerMs.push(ms);
          add(backfillCalls, calls);
        },
        async () => {
          const { rate, calls } = await inOrderOnce(`i${round}`, m);
          inOrderRounds.push(rate);
          add(inOrderCalls, calls);
        },
      ];
      if (round % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }
    return {
      backend,
      backfillRounds,
      inOrderRounds,
      backfill: interval(backfillRounds),
      answerMs: interval(answerMs),
      inOrder: interval(inOrderRounds),
      ratio: interval(backfillRounds.map((rate, round) => rate / inOrderRounds[round]!)),
      backfillCalls: perEvent(backfillCalls, n * options.rounds),
      inOrderCalls: perEvent(inOrderCalls, m * options.rounds),
    };
  } finally {
    await namespace.dispose();
  }
}

/**
 * The API alone: the client pages through the whole stream, nothing else (what every backfill pays at least, with the
 * service in this process). Events per second of each pass.
 */
export async function measurePaging(stream: BackfillStream, rounds: number): Promise<Interval> {
  const rates: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    let count = 0;
    const started = performance.now();
    for await (const _event of stream.client.events(stream.streamId, { afterSeq: 0 })) count++;
    const ms = performance.now() - started;
    if (count !== stream.deliveries.length)
      throw new Error(`the API returned ${count} events, expected ${stream.deliveries.length}`);
    if (round > 0) rates.push((count * 1000) / ms); // the first pass warms up
  }
  return interval(rates);
}

function add(into: Record<string, number>, counts: CallCounts): void {
  for (const [method, n] of Object.entries(counts)) into[method] = (into[method] ?? 0) + n;
}
