import {
  createReceiver,
  isStreamCursorStore,
  type DedupeStore,
  type EventQueue,
  type Receiver,
  streamOrdering,
} from '@kyb-webhooks/core';
import { randomSecret, startKybService, type TestEnvelope } from '@kyb-webhooks/testing';
import { createKybClient, recover } from '@kyb-webhooks/client';
import type { ServedApp } from './demo.js';
import { registerDemoHandlers } from './handlers.js';
import type { ScenarioRow } from './scenario.js';

/** What the stream part of the demo shows: its rows, and whether every stream ran completely, once, in order. */
export interface StreamScenarioResult {
  rows: ScenarioRow[];
  /** Events the service emitted, on how many streams, and whether each ran exactly once in seq order. */
  events: number;
  streams: number;
  inOrder: boolean;
}

// The real schedule is 10 attempts over about 9 hours; here 3 attempts 60 and 120 ms apart (timeScale), and a
// quarantine after 4 consecutive failures, so that one failing stream exhausts but an outage across streams quarantines.
const SERVICE_OPTIONS = { timeScale: 1e-3, retry: { maxAttempts: 3 }, quarantineAfter: 4 } as const;

/**
 * The stream part of the demo: the local KYB service (the test kit's) delivers to the example app with its real rules
 * (retries, seq order, quarantine), and the app's receiver enforces each stream's order, backfilling gaps through
 * the KYB API client. It plays a wallet change given up on during a short outage (a gap, backfilled when the next
 * change arrives), then a longer outage that gets the endpoint quarantined, recovered in one call by `recover()`.
 * With `queue` (queue mode), deliveries and replays are answered at enqueue and `startWorker` runs the handlers;
 * `settled` waits for it before each row.
 *
 * @example
 * ```ts
 * const result = await runStreamScenario({ serve: (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')), store: createMemoryStore() })
 * console.log(formatScenarioTable(result.rows))
 * ```
 */
export async function runStreamScenario(options: {
  serve: (receiver: Receiver) => Promise<ServedApp>;
  store: DedupeStore;
  queue?: EventQueue;
  settled?: () => Promise<void>;
  startWorker?: (receiver: Receiver) => Promise<void>;
}): Promise<StreamScenarioResult> {
  const service = await startKybService(SERVICE_OPTIONS);
  const secrets = { '1': randomSecret() };
  const client = createKybClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
  const receiver = createReceiver({
    secrets,
    attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
    store: options.store,
    ...(options.queue ? { queue: options.queue } : {}),
    ordering: streamOrdering({
      mode: 'enforce',
      firstSeq: 0,
      fetchEventsAfter: (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal }),
    }),
  });
  const activity = registerDemoHandlers(receiver);
  const ran: { streamId: string; eventId: string; fetched: boolean }[] = [];
  receiver.onAny((event, context) => {
    ran.push({ streamId: event.stream_id, eventId: event.event_id, fetched: context.authentication.fetched === true });
  });
  await options.startWorker?.(receiver);
  // The service has delivered what it had; in queue mode, the worker has then run it.
  const idle = async () => {
    await service.idle();
    await options.settled?.();
  };

  let app: ServedApp | undefined;
  const up = async () => {
    app = await options.serve(receiver);
    service.setEndpoint({ url: app.url, secrets }); // back on a new free port: the merchant's endpoint follows it
  };
  const down = async () => {
    await app?.close();
    app = undefined;
  };

  const rows: ScenarioRow[] = [];
  const attemptsOf = (envelope: TestEnvelope) =>
    service.attempts(envelope.stream_id).filter((attempt) => attempt.eventId === envelope.event_id);
  // The row of one event: the answer to its last delivery attempt, unless `override` says what happened instead.
  const row = (step: string, envelope: TestEnvelope, override?: Pick<ScenarioRow, 'status' | 'code'>) => {
    const last = attemptsOf(envelope).at(-1);
    rows.push({
      step,
      event: envelope.event.replace(/^kyb\./, ''),
      status: override ? override.status : (last?.status ?? null),
      code: override ? override.code : (last?.responseCode ?? '—'),
      handler: activity.get(envelope.event_id) ?? '—',
    });
  };

  try {
    await up();
    // 1. A gap: the app is down while a wallet change is delivered; the service gives it up and moves on.
    const business = 'biz_demo_acme_' + Date.now().toString(36); // a new stream per run: a durable store keeps cursors
    const first = await service.changeBusinessWallet({
      businessId: business,
      previous: '0x1111aaaa',
      next: '0x2222bbbb',
    });
    await idle();
    row('wallet changed (seq 0)', first);
    await down();
    const missed = await service.changeBusinessWallet({
      businessId: business,
      previous: '0x2222bbbb',
      next: '0x3333cccc',
    });
    await idle();
    row('wallet changed (seq 1), app down', missed, {
      status: null,
      code: `service gave up after ${attemptsOf(missed).length} attempts`,
    });
    await up();
    const next = await service.changeBusinessWallet({
      businessId: business,
      previous: '0x3333cccc',
      next: '0x4444dddd',
    });
    await idle();
    row('wallet changed (seq 2), app back: a gap', missed, { status: null, code: 'seq 1 backfilled from the API' });
    row('  then seq 2 itself', next);

    // 2. A quarantine: a longer outage while three requests come in; their deliveries keep failing, the service
    // quarantines the endpoint and keeps queuing.
    await down();
    const requests = await Promise.all([
      service.createDataRequest(),
      service.createDataRequest(),
      service.createSignatureRequest(),
    ]);
    await idle();
    await service.release(requests[0]!);
    await service.refuse(requests[1]!, 'threshold_not_met');
    await service.sign(requests[2]!);
    await idle();
    const held = service.pending();
    const failed = service.attempts().filter((attempt) => requests.includes(attempt.streamId)).length;
    rows.push({
      step: `app down: 3 requests, ${failed} attempts fail`,
      event: '—',
      status: null,
      code: service.quarantined ? 'endpoint quarantined' : 'not quarantined',
      handler: '—',
    });
    rows.push({
      step: `  meanwhile released, refused, signed`,
      event: '—',
      status: null,
      code: `${held} events queued`,
      handler: '—',
    });
    await up();
    // Recovery in one call: replay each stream from the API through the receiver (in order, deduped), then reactivate.
    // These streams never completed an event, so the store has no cursor for them: they are named.
    const store = isStreamCursorStore(options.store) ? options.store : undefined;
    const report = await recover({ client, receiver, store, requestIds: requests });
    await options.settled?.();
    rows.push({
      step: 'app back: recover({ requestIds })',
      event: '—',
      status: null,
      code: report.ok ? `${report.totals.processed} events replayed` : `${report.totals.failed} events still failing`,
      handler: '—',
    });
    for (const id of requests) {
      for (const envelope of service.request(id)!.events) {
        const replayed = ran.some((entry) => entry.eventId === envelope.event_id && entry.fetched);
        row(`  ${short(id)} seq ${envelope.seq}`, envelope, {
          status: null,
          code: replayed ? 'replayed' : 'delivered',
        });
      }
    }
    // recover() reactivated the endpoint last, so the service's held backlog finds every event already done.
    await idle();
    const backlog = service
      .attempts()
      .filter((attempt) => requests.includes(attempt.streamId) && attempt.status !== null);
    const duplicates = backlog.filter((attempt) => attempt.responseCode === 'duplicate').length;
    rows.push({
      step: 'then the reactivated backlog arrives',
      event: '—',
      status: null,
      code: `${backlog.length} deliveries, ${duplicates} duplicate`,
      handler: '—',
    });

    const streamIds = [business, ...requests];
    const inOrder = streamIds.every((id) => {
      const sent = service.request(id)!.events.map((event) => event.event_id);
      const handled = ran.filter((entry) => entry.streamId === id).map((entry) => entry.eventId);
      return JSON.stringify(sent) === JSON.stringify(handled);
    });
    return {
      rows,
      events: streamIds.reduce((total, id) => total + service.request(id)!.events.length, 0),
      streams: streamIds.length,
      inOrder,
    };
  } finally {
    await down();
    await service.stop();
  }
}

/** `dr_01jx…` → `dr_…x7k2`: enough of an id to tell the demo's requests apart. */
function short(id: string): string {
  return `${id.slice(0, 3)}…${id.slice(-4)}`;
}
