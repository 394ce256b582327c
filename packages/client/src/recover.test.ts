/**
 * Recovery (issue 12 §3) over real HTTP: the local KYB service delivers to a node:http endpoint that hands every
 * delivery to a real receiver, and `recover()` talks to the service's API through the real client. No mocks.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMemoryStore,
  createReceiver,
  KybWebhookError,
  type OrderingMode,
  type OrderingOptions,
  type Receiver,
  type StreamCursorStore,
  type UnfillableDecision,
  streamOrdering,
} from '@kyb-webhooks/core';
import {
  API_SHAPE_VARIANTS,
  randomSecret,
  startKybService,
  type KybService,
  type KybServiceOptions,
} from '@kyb-webhooks/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createKybClient, type KybClient } from './client.js';
import { recover, type RecoverOptions, type RecoverProgress } from './recover.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Handled {
  streamId: string;
  seq: number;
  fetched: boolean;
}

interface Setup {
  service: KybService;
  client: KybClient;
  receiver: Receiver;
  store: StreamCursorStore;
  handled: Handled[];
  /** While true the endpoint answers 503 to everything (the merchant's outage). */
  outage: { down: boolean };
  /** Event ids whose handler fails (a downstream the handler depends on is down), until removed. */
  failing: Set<string>;
}

async function setUp(
  mode: OrderingMode,
  serviceOptions: KybServiceOptions = {},
  pageSize?: number,
  orderingExtra: Partial<OrderingOptions> = {},
): Promise<Setup> {
  const service = await startKybService({ timeScale: 1e-5, ...serviceOptions });
  cleanups.push(() => service.stop());
  const client = createKybClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    ...(pageSize === undefined ? {} : { pageSize }),
  });
  const secrets = { '1': randomSecret() };
  const store = createMemoryStore();
  const receiver = createReceiver({
    secrets,
    // Keys refreshed at every check: a key the service retires stops verifying at once, as after a receiver restart.
    attestation: {
      issuer: service.issuer,
      audience: service.audience,
      jwksUrl: service.jwksUrl,
      jwksCacheMaxAgeMs: 0,
      jwksCooldownMs: 0,
    },
    store,
    ...(mode === 'off'
      ? {}
      : {
          ordering: streamOrdering({
            mode,
            fetchEventsAfter: (s: string, a: number, signal: AbortSignal) => client.events(s, { afterSeq: a, signal }),
            ...orderingExtra,
          }),
        }),
  });
  const handled: Handled[] = [];
  const failing = new Set<string>();
  receiver.onAny((event, context) => {
    if (failing.has(event.event_id)) throw new Error('the CRM is down');
    handled.push({ streamId: event.stream_id, seq: event.seq, fetched: context.authentication.fetched === true });
  });
  const outage = { down: false };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (outage.down) return void response.writeHead(503).end();
      const headers = request.headers as IncomingHttpHeaders & Record<string, string | string[] | undefined>;
      void receiver
        .receive({ method: request.method, headers, body: new Uint8Array(Buffer.concat(chunks)) })
        .then((result) => {
          response
            .writeHead(result.status, { 'content-type': 'application/json', ...result.headers })
            .end(JSON.stringify(result.body));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  service.setEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`, secrets });
  return { service, client, receiver, store, handled, outage, failing };
}

/** The seqs the handlers saw on one stream, in the order they ran. */
const seqsOf = (handled: Handled[], streamId: string) =>
  handled.filter((h) => h.streamId === streamId).map((h) => h.seq);
/** Every seq the service holds for a stream. */
const streamSeqs = (service: KybService, streamId: string) =>
  service.request(streamId)!.events.map((event) => event.seq);

/** Two streams with a pending_approval each, delivered, then an outage during which both get more events. */
async function quarantinedDuringOutage(mode: OrderingMode) {
  const setup = await setUp(mode, { quarantineAfter: 3 });
  const { service, outage } = setup;
  const [a, b] = [await service.createDataRequest(), await service.createDataRequest()];
  await service.idle();
  outage.down = true;
  await service.release(a);
  await service.emit(a, 'kyb.data_request.pending_approval');
  await service.emit(b, 'kyb.data_request.pending_approval');
  await service.refuse(b, 'declined');
  await service.idle();
  expect(service.quarantined).toBe(true);
  outage.down = false;
  return { ...setup, a, b };
}

describe('recover after a quarantine', () => {
  it.each(['enforce', 'off'] as const)(
    'ordering %s: replays the backlog of every stream in order, reactivates, and the held deliveries are then answered duplicate: nothing lost, nothing twice',
    async (mode) => {
      const { service, client, receiver, store, handled, a, b } = await quarantinedDuringOutage(mode);
      const report = await recover({ client, receiver, store, requestIds: [a, b] });
      expect(report.ok).toBe(true);
      expect(report.reactivated).toBe(true);
      expect(report.totals).toMatchObject({ processed: 4, failed: 0, held: 0 });
      expect(report.streams.map((s) => [s.requestId, s.processed])).toEqual([
        [a, 2],
        [b, 2],
      ]);
      expect(seqsOf(handled, a)).toEqual([0, 1, 2]);
      expect(seqsOf(handled, b)).toEqual([0, 1, 2]);
      // The backlog the service held comes after the reactivation: each one answered duplicate, no handler ran again.
      await service.idle();
      expect(service.quarantined).toBe(false);
      expect(service.pending()).toBe(0);
      expect(seqsOf(handled, a)).toEqual(streamSeqs(service, a));
      expect(seqsOf(handled, b)).toEqual(streamSeqs(service, b));
      const backlogAnswers = service.attempts().filter((attempt) => attempt.status === 200 && attempt.seq > 0);
      expect(backlogAnswers.map((attempt) => attempt.responseCode)).toEqual(backlogAnswers.map(() => 'duplicate'));
    },
  );

  it('counts the events the delivery log shows without a 2xx (the attempts that led to the quarantine)', async () => {
    const { service, client, receiver, store, a, b } = await quarantinedDuringOutage('enforce');
    const logged = new Set(
      service
        .attempts()
        .filter((attempt) => attempt.status !== 200)
        .map((attempt) => attempt.eventId),
    );
    const report = await recover({ client, receiver, store, requestIds: [a, b] });
    expect(report.totals.unacknowledged).toBe(logged.size);
    expect(logged.size).toBeGreaterThan(0);
  });

  it('leaves the endpoint quarantined with reactivate: false, and says so', async () => {
    const { service, client, receiver, store, a, b } = await quarantinedDuringOutage('enforce');
    const report = await recover({ client, receiver, store, requestIds: [a, b] }, { reactivate: false });
    expect(report.reactivated).toBe(false);
    expect(report.totals.processed).toBe(4);
    expect(service.quarantined).toBe(true);
  });
});

describe('recover events that exhausted their retries', () => {
  async function exhausted(mode: OrderingMode) {
    const setup = await setUp(mode, { retry: { maxAttempts: 3 } });
    const { service, failing } = setup;
    const id = await service.createDataRequest();
    await service.idle();
    const release = await service.emit(id, 'kyb.data_request.pending_approval');
    failing.add(release.event_id);
    await service.idle();
    expect(service.exhausted.map((event) => event.seq)).toEqual([1]);
    failing.clear();
    return { ...setup, id };
  }

  it.each(['off', 'enforce'] as const)(
    'ordering %s: replays the event given up on; the handlers see it once, fetched',
    async (mode) => {
      const { client, receiver, store, handled, id } = await exhausted(mode);
      const report = await recover({ client, receiver, store, requestIds: [id] });
      expect(report.ok).toBe(true);
      expect(report.streams[0]).toMatchObject({
        requestId: id,
        afterSeq: 0,
        unacknowledged: 1,
        processed: 1,
        duplicate: 0,
        failures: [],
      });
      expect(handled.map((h) => [h.seq, h.fetched])).toEqual([
        [0, false],
        [1, true],
      ]);
    },
  );

  it('a second recover reports everything duplicate and runs no handler', async () => {
    const { client, receiver, store, handled, id } = await exhausted('off');
    await recover({ client, receiver, store, requestIds: [id] });
    const before = handled.length;
    const again = await recover({ client, receiver, store, requestIds: [id] });
    expect(again.ok).toBe(true);
    expect(again.totals).toMatchObject({ replayed: 1, processed: 0, duplicate: 1, failed: 0 });
    expect(handled).toHaveLength(before);
  });

  it('reports an event that still fails with its code; under enforce the events behind it are held, not run out of order', async () => {
    const { service, client, receiver, store, handled, failing, id } = await exhausted('enforce');
    const stuck = service.request(id)!.events[1]!;
    failing.add(stuck.event_id);
    await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.ok).toBe(false);
    expect(report.streams[0]!.failures).toEqual([
      { eventId: stuck.event_id, seq: 1, code: 'handler_failed', status: 500 },
    ]);
    expect(report.streams[0]).toMatchObject({ failed: 1, held: 1, processed: 0 });
    expect(seqsOf(handled, id)).toEqual([0]);
    failing.clear();
    const fixed = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(fixed.ok).toBe(true);
    expect(seqsOf(handled, id)).toEqual([0, 1, 2]);
  });
});

// The same recovery over every shape the API may answer in (paging by has_more, cursor, next_after_seq, next URL,
// Link header, bare list + X-Next-Cursor; null fields, numbers as strings, ISO times, newest first): the spec shows
// none of them (4.2), and an independent implementation of the service answered in several.
describe.each(Object.entries(API_SHAPE_VARIANTS))('recover over the API shape "%s"', (_name, apiShape) => {
  it.each(['off', 'enforce'] as const)(
    'ordering %s: a release that failed all 11 attempts is replayed and runs once, in order',
    async (mode) => {
      const { service, client, receiver, store, handled, failing } = await setUp(
        mode,
        { apiShape, retry: { maxAttempts: 11 } },
        2,
      );
      const id = await service.createDataRequest();
      await service.emit(id, 'kyb.data_request.pending_approval');
      await service.idle();
      const release = await service.release(id);
      failing.add(release.event_id);
      await service.idle();
      expect(service.exhausted.map((event) => event.seq)).toContain(2);
      expect(service.attempts(id).filter((attempt) => attempt.seq === 2)).toHaveLength(11);
      failing.clear();
      const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
      expect(report.streams[0]!.error).toBeUndefined();
      expect(report).toMatchObject({ ok: true, totals: { unacknowledged: 1, processed: 1, failed: 0, held: 0 } });
      expect(report.streams[0]!.afterSeq).toBe(1);
      expect(seqsOf(handled, id)).toEqual([0, 1, 2]);
    },
  );

  it('a log of many pages read whole: every unacknowledged event counted, wherever the log puts it', async () => {
    const { service, client, receiver, store, outage } = await setUp('off', {
      apiShape,
      quarantineAfter: 100,
      retry: { maxAttempts: 2 },
    });
    const id = await service.createDataRequest();
    await service.idle();
    outage.down = true;
    for (let i = 0; i < 3; i++) await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    outage.down = false;
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report).toMatchObject({ ok: true, totals: { unacknowledged: 3, processed: 3, replayed: 3 } });
    expect(report.streams[0]!.afterSeq).toBe(0);
  });
});

describe('a log that cannot be read whole', () => {
  it('is a stream error, never ok: true', async () => {
    const { service, receiver, store } = await setUp('off', { apiShape: { paging: 'link', deliveriesPageSize: 1 } });
    const id = await service.createDataRequest();
    await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    const client = createKybClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, paging: { maxPages: 1 } });
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.ok).toBe(false);
    expect(report.streams[0]).toMatchObject({ replayed: 0, error: { code: 'too_many_pages' } });
  });
});

// A release purged by the service and served by the events call without its attestation can never be verified
// again: the stream is stalled for good under enforce, until ordering.onUnfillable skips it (issue 26 §2).
describe('a stream stalled for good', () => {
  const causes = {
    'purged and served without its attestation': async (service: KybService, id: string) => service.purge(id),
    'signed by a key the service retired': async (service: KybService) => {
      const old = service.kid;
      await service.rotateKeys();
      expect(service.retireKey(old)).toBe(true);
    },
  };

  async function purgedRelease(
    decision: { now: UnfillableDecision },
    cause: keyof typeof causes = 'purged and served without its attestation',
  ) {
    const setup = await setUp(
      'enforce',
      { retry: { maxAttempts: 2 }, apiShape: { purgedEventsWithoutAttestation: true } },
      undefined,
      {
        onUnfillable: () => decision.now,
        backfillRetryAfterMs: 0,
      },
    );
    const { service, failing } = setup;
    const id = await service.createDataRequest();
    await service.idle();
    const release = await service.release(id);
    failing.add(release.event_id);
    await service.idle();
    await causes[cause](service, id);
    failing.clear();
    await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    // The later event was refused 502 backfill_unfillable on every attempt: the release cannot be filled in.
    expect(
      service
        .attempts(id)
        .filter((attempt) => attempt.seq === 2)
        .map((attempt) => attempt.responseCode),
    ).toEqual(['backfill_unfillable', 'backfill_unfillable']);
    return { ...setup, id, release };
  }

  it('is reported as permanent, not as a transient failure, while onUnfillable waits', async () => {
    const { client, receiver, store, handled, id, release } = await purgedRelease({ now: 'wait' });
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.ok).toBe(false);
    expect(report.streams[0]!.failures).toEqual([
      { eventId: release.event_id, seq: 1, code: 'attestation_missing', status: 401, permanent: true },
      { eventId: expect.any(String), seq: 2, code: 'backfill_unfillable', status: 502, permanent: true },
    ]);
    expect(report.totals).toMatchObject({ failed: 2, skipped: 0, processed: 0, held: 0 });
    expect(seqsOf(handled, id)).toEqual([0]);
  });

  it('a release signed by a retired key: permanent too, and onGap is told key_retired', async () => {
    const { service, client, receiver, store, id, release } = await purgedRelease(
      { now: 'wait' },
      'signed by a key the service retired',
    );
    const reasons: unknown[] = [];
    receiver.onGap((gap) => {
      if (gap.kind === 'unfillable') reasons.push([gap.reason, gap.missingSeq]);
    });
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.ok).toBe(false);
    expect(report.streams[0]!.failures).toEqual([
      { eventId: release.event_id, seq: 1, code: 'attestation_invalid', status: 401, permanent: true },
      { eventId: expect.any(String), seq: 2, code: 'backfill_unfillable', status: 502, permanent: true },
    ]);
    expect(service.attempts(id).filter((attempt) => attempt.seq === 2)).toHaveLength(2);
    expect(reasons).toEqual([['key_retired', 1]]);
  });

  it('goes on once onUnfillable skips the purged release: the later event runs, the skip is counted', async () => {
    const decision: { now: UnfillableDecision } = { now: 'wait' };
    const { client, receiver, store, handled, id, release } = await purgedRelease(decision);
    decision.now = { skip: 'release purged; re-requested (test)' };
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.streams[0]!.failures).toEqual([
      { eventId: release.event_id, seq: 1, code: 'attestation_missing', status: 401, skipped: true },
    ]);
    expect(report).toMatchObject({ ok: true, totals: { failed: 0, skipped: 1, processed: 1, held: 0 } });
    expect(seqsOf(handled, id)).toEqual([0, 2]);
  });
});

describe('late events', () => {
  it('counts an event the onGap handlers took as late, not as processed', async () => {
    const { service, client, receiver, store, handled, failing } = await setUp('enforce', {
      retry: { maxAttempts: 2 },
    });
    const lateSeen: number[] = [];
    receiver.onGap((report) => {
      if (report.kind === 'late') lateSeen.push(report.seq);
    });
    const id = await service.createDataRequest();
    await service.idle();
    const stuck = await service.emit(id, 'kyb.data_request.pending_approval');
    failing.add(stuck.event_id);
    await service.idle();
    // The merchant moved the stream past seq 1 by hand; its next event runs, and seq 1 is now behind the cursor.
    await store.advanceCursor(id, 1);
    failing.clear();
    await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    const report = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(report.ok).toBe(true);
    expect(report.totals).toMatchObject({ replayed: 2, late: 1, processed: 0, duplicate: 1, failed: 0 });
    expect(lateSeen).toEqual([1]);
    expect(seqsOf(handled, id)).toEqual([0, 2]);
  });
});

describe('where replay starts', () => {
  it('with an empty delivery log: the whole stream, then, with ordering on, after the cursor', async () => {
    const { service, client, receiver, store, handled } = await setUp('enforce');
    service.setEndpoint(undefined); // events queue and no attempt is logged
    const id = await service.createDataRequest();
    await service.emit(id, 'kyb.data_request.pending_approval');
    const first = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(first.streams[0]).toMatchObject({ afterSeq: -1, unacknowledged: 0, processed: 2 });
    const second = await recover({ client, receiver, store, requestIds: [id] }, { reactivate: false });
    expect(second.streams[0]).toMatchObject({ afterSeq: 1, replayed: 0 });
    expect(seqsOf(handled, id)).toEqual([0, 1]);
  });
});

describe('which streams', () => {
  it('with since, recovers the streams the store saw active since then, and not the older ones', async () => {
    const { service, client, receiver, store, handled } = await setUp('enforce');
    const old = await service.createDataRequest();
    await service.idle();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = Date.now();
    const [a, b] = [await service.createDataRequest(), await service.createDataRequest()];
    await service.idle();
    const report = await recover({ client, receiver, store, since });
    expect(report.streams.map((s) => s.requestId).sort()).toEqual([a, b].sort());
    expect(report.streams.map((s) => s.requestId)).not.toContain(old);
    expect(report.ok).toBe(true);
    expect(handled).toHaveLength(3);
  });

  it('with since and requestIds, recovers both, each stream once', async () => {
    const { service, client, receiver, store } = await setUp('enforce');
    const a = await service.createDataRequest();
    await service.idle();
    const since = Date.now() - 60_000;
    const never = await service.createDataRequest();
    const report = await recover({ client, receiver, store, since, requestIds: [never, a] });
    expect(report.streams.map((s) => s.requestId)).toEqual([never, a]);
  });

  it("reports one stream's API failure and recovers the others", async () => {
    const { service, client, receiver, store, handled, a, b } = await quarantinedDuringOutage('enforce');
    const report = await recover({ client, receiver, store, requestIds: [a, 'dr_unknown', b] });
    expect(report.ok).toBe(false);
    expect(report.streams[1]).toMatchObject({
      requestId: 'dr_unknown',
      replayed: 0,
      error: { code: 'request_not_found', status: 404 },
    });
    expect(report.streams[0]).toMatchObject({ requestId: a, processed: 2 });
    expect(report.streams[2]).toMatchObject({ requestId: b, processed: 2 });
    expect(report.reactivated).toBe(true);
    await service.idle();
    expect(seqsOf(handled, a)).toEqual(streamSeqs(service, a));
    expect(seqsOf(handled, b)).toEqual(streamSeqs(service, b));
  });
});

describe('progress', () => {
  it('reports the streams found, each stream, and every progressEvery events of a long stream', async () => {
    const { service, client, receiver, store, outage } = await setUp('enforce', { quarantineAfter: 2 });
    const id = await service.createDataRequest();
    await service.idle();
    outage.down = true;
    for (let i = 0; i < 5; i++) await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    outage.down = false;
    const seen: RecoverProgress[] = [];
    await recover({ client, receiver, store, requestIds: [id] }, { onProgress: (p) => seen.push(p), progressEvery: 2 });
    expect(seen.map((p) => [p.kind, p.stream?.replayed ?? null, p.totals.processed])).toEqual([
      ['streams_found', null, 0],
      ['stream_started', 0, 0],
      ['events', 2, 0],
      ['events', 4, 0],
      ['stream_done', 5, 5],
    ]);
    expect(seen.every((p) => p.streamCount === 1)).toBe(true);
  });
});

describe('abort', () => {
  it("rejects with the signal's reason when aborted mid-way, and does not reactivate", async () => {
    const { service, client, receiver, store, a, b } = await quarantinedDuringOutage('enforce');
    const controller = new AbortController();
    const reason = new Error('deploy started');
    const onProgress = (p: RecoverProgress) => {
      if (p.kind === 'stream_done') controller.abort(reason);
    };
    await expect(
      recover({ client, receiver, store, requestIds: [a, b] }, { signal: controller.signal, onProgress }),
    ).rejects.toBe(reason);
    expect(service.quarantined).toBe(true);
  });
});

describe('concurrency', () => {
  it.each([
    [1, 1],
    [2, 2],
  ])('with concurrency %i recovers every stream, at most %i at a time', async (concurrency, most) => {
    const { service, client, receiver, store, outage, handled } = await setUp('enforce', { quarantineAfter: 3 });
    const ids = [
      await service.createDataRequest(),
      await service.createDataRequest(),
      await service.createDataRequest(),
    ];
    await service.idle();
    outage.down = true;
    for (const id of ids) await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    outage.down = false;
    let running = 0;
    let peak = 0;
    const onProgress = (p: RecoverProgress) => {
      if (p.kind === 'stream_started') peak = Math.max(peak, ++running);
      if (p.kind === 'stream_done') running -= 1;
    };
    const report = await recover(
      { client, receiver, store, requestIds: ids },
      { concurrency, onProgress, reactivate: false },
    );
    expect(report.ok).toBe(true);
    expect(report.streams.map((s) => [s.requestId, s.processed])).toEqual(ids.map((id) => [id, 1]));
    expect(peak).toBe(most);
    for (const id of ids) expect(seqsOf(handled, id)).toEqual([0, 1]);
  });
});

describe('arguments', () => {
  it.each([
    ['no streams named', (t: object) => t],
    ['since without a store', (t: object) => ({ ...t, since: Date.now() })],
    ['requestIds not an array', (t: object) => ({ ...t, requestIds: 'dr_1' })],
    ['a since that is no time', (t: object) => ({ ...t, since: 'yesterday', store: createMemoryStore() })],
    ['concurrency 0', (t: object) => ({ ...t, requestIds: ['dr_1'] }), { concurrency: 0 }],
    ['a fractional progressEvery', (t: object) => ({ ...t, requestIds: ['dr_1'] }), { progressEvery: 2.5 }],
  ] as [string, (t: object) => object, RecoverOptions?][])('throws config_invalid for %s', async (_, make, options) => {
    const client = createKybClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'kyb_test_x' });
    const receiver = createReceiver({ secrets: { '1': 'secret' } });
    const attempt = recover(make({ client, receiver }) as never, options);
    await expect(attempt).rejects.toBeInstanceOf(KybWebhookError);
    await expect(attempt).rejects.toMatchObject({ code: 'config_invalid' });
  });
});
