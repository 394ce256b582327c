/**
 * recover()'s decisions, one at a time: where replay starts, which outcomes count as what, when a stream stops, what
 * the progress reports and the report say, which arguments are refused. The real client reads a delivery log and
 * events that a `fetch` option serves (canned answers are the point: each case is one log), and the receiver answers
 * each replay as scripted, since these are outcomes (in_progress, a refused attestation, backfill_unfillable) that a
 * real receiver only gives in rare states. recover.test.ts covers the same over the local service, end to end.
 */
import { getEventListeners } from 'node:events';
import { KybWebhookError, type ReceiveResult, type StreamCursorStore } from '@kyb-webhooks/core';
import { describe, expect, it, vi } from 'vitest';
import { createKybClient } from './client.js';
import { recover, type RecoverOptions, type RecoverProgress, type RecoverTarget } from './recover.js';

const BASE = 'http://127.0.0.1:9';

interface Api {
  /** Delivery log entries per stream. */
  log?: Record<string, unknown[]>;
  /** Seqs of the events per stream (an event is generated for each). */
  events?: Record<string, number[]>;
  /** Statuses of successive reactivate calls (the last one repeats); default 200. */
  reactivate?: number[];
  /** Hangs the calls whose path ends so until their signal aborts. */
  hang?: 'deliveries' | 'events' | 'reactivate';
}

function api(spec: Api) {
  const paths: string[] = [];
  const client = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    timeoutMs: 4000,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (input, init) => {
      const url = new URL(String(input));
      paths.push(url.pathname + url.search);
      const operation = url.pathname.split('/').at(-1)!;
      if (operation === spec.hang) {
        return new Promise<Response>((_resolve, reject) => {
          init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason as Error), { once: true });
        });
      }
      const id = decodeURIComponent(url.pathname.split('/').at(-2)!);
      if (operation === 'deliveries') return Response.json({ deliveries: spec.log?.[id] ?? [], has_more: false });
      if (operation === 'events') {
        const after = Number(url.searchParams.get('after_seq'));
        const seqs = (spec.events?.[id] ?? []).filter((seq) => seq > after);
        return Response.json({ events: seqs.map((seq) => event(id, seq)), has_more: false });
      }
      const statuses = spec.reactivate ?? [200];
      const calls = paths.filter((path) => path.endsWith('/reactivate')).length;
      const status = statuses[Math.min(calls, statuses.length) - 1]!;
      return status === 200 ? Response.json({ reactivated: true }) : new Response('', { status });
    },
  });
  return { client, paths };
}

function event(streamId: string, seq: number) {
  return {
    event: 'kyb.data_request.pending_approval',
    event_id: `${streamId}-e${seq}`,
    stream_id: streamId,
    seq,
    data: {},
  };
}

const ok = (code?: ReceiveResult['code']): ReceiveResult => ({
  status: 200,
  ...(code ? { code } : {}),
  headers: {},
  body: { received: true },
});
const fail = (status: number, code?: ReceiveResult['code']): ReceiveResult => ({
  status,
  ...(code ? { code } : {}),
  headers: {},
  body: { received: true },
});

/** A receiver that answers each replay from `answers` (by event id; a list is used up in order), else processed. */
function receiver(mode: 'off' | 'enforce' | 'tolerate', answers: Record<string, ReceiveResult | ReceiveResult[]> = {}) {
  const replayed: { eventId: string; signal: AbortSignal | undefined }[] = [];
  return {
    replayed,
    receiver: {
      orderingMode: mode,
      replay: async (raw: unknown, options?: { signal?: AbortSignal }) => {
        const eventId = (raw as { event_id: string }).event_id;
        replayed.push({ eventId, signal: options?.signal });
        const answer = answers[eventId];
        if (Array.isArray(answer)) return answer.shift() ?? ok();
        return answer ?? ok();
      },
    } as RecoverTarget['receiver'],
  };
}

/** A store that knows `cursors`; a cursor that is not a number is what its getCursor throws. */
function cursorStore(cursors: Record<string, unknown>): StreamCursorStore {
  return {
    getCursor: async (id: string) => {
      const cursor = cursors[id];
      if (cursor !== undefined && typeof cursor !== 'number') throw cursor;
      return cursor ?? null;
    },
  } as unknown as StreamCursorStore;
}

const acked = (id: string, seq: number) => ({ event_id: `${id}-e${seq}`, seq, status: 200 });
const unacked = (id: string, seq: number) => ({ event_id: `${id}-e${seq}`, seq, status: 503 });

describe('where replay starts', () => {
  it.each([
    ['an empty log, ordering off: the whole stream', [], undefined, 'off', -1],
    ['every logged event acknowledged: after the last one', ['a3', 'a5', 'a4'], undefined, 'off', 5],
    ['an unacknowledged event: the seq before the lowest one', ['a2', 'u4', 'u3', 'a5'], undefined, 'off', 2],
    ['an unacknowledged event at seq 0: the whole stream', ['u0', 'a1'], undefined, 'off', -1],
    ['ordering on, the cursor behind the log', ['a3', 'u6'], 1, 'enforce', 1],
    ['ordering on, the log behind the cursor', ['a3', 'u6'], 9, 'enforce', 5],
    ['ordering on, an empty log: after the cursor', [], 4, 'tolerate', 4],
    ['ordering on, no cursor, an empty log', [], undefined, 'enforce', -1],
    ['ordering off ignores the cursor', ['a3'], 0, 'off', 3],
  ] as const)('%s', async (_what, entries, cursor, mode, afterSeq) => {
    const log = entries.map((entry) => (entry[0] === 'a' ? acked : unacked)('dr_1', Number(entry.slice(1))));
    const { client, paths } = api({ log: { dr_1: log }, events: { dr_1: [0, 1, 2, 3, 4, 5, 6, 7] } });
    const { receiver: r, replayed } = receiver(mode);
    const store = cursorStore(cursor === undefined ? {} : { dr_1: cursor });
    const report = await recover({ client, receiver: r, store, requestIds: ['dr_1'] }, { reactivate: false });
    expect(report.streams[0]!.afterSeq).toBe(afterSeq);
    expect(paths).toContain(`/api/v1/kyb/data-requests/dr_1/events?after_seq=${afterSeq}`);
    expect(replayed.map((r) => r.eventId)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].filter((seq) => seq > afterSeq).map((seq) => `dr_1-e${seq}`),
    );
    expect(report.streams[0]!.unacknowledged).toBe(entries.filter((entry) => entry[0] === 'u').length);
  });

  it('works without a store (requestIds alone)', async () => {
    const { client } = api({ events: { dr_1: [0, 1] } });
    const report = await recover({ client, receiver: receiver('enforce').receiver, requestIds: ['dr_1'] });
    expect(report).toMatchObject({ ok: true, reactivated: true, totals: { replayed: 2, processed: 2 } });
  });
});

describe('outcomes', () => {
  it('counts each outcome, and a failure without a code as failed', async () => {
    const { client } = api({ events: { dr_1: [0, 1, 2, 3, 4, 5, 6] } });
    const { receiver: r } = receiver('off', {
      'dr_1-e1': ok('duplicate'),
      'dr_1-e2': ok('late'),
      'dr_1-e3': fail(500),
      'dr_1-e4': fail(300),
      'dr_1-e5': fail(199),
    });
    const report = await recover({ client, receiver: r, requestIds: ['dr_1'] }, { reactivate: false });
    expect(report.ok).toBe(false);
    expect(report.totals).toEqual({
      replayed: 7,
      processed: 2,
      duplicate: 1,
      late: 1,
      failed: 3,
      skipped: 0,
      held: 0,
      unacknowledged: 0,
    });
    expect(report.streams[0]!.failures).toEqual([
      { eventId: 'dr_1-e3', seq: 3, code: 'failed', status: 500 },
      { eventId: 'dr_1-e4', seq: 4, code: 'failed', status: 300 },
      { eventId: 'dr_1-e5', seq: 5, code: 'failed', status: 199 },
    ]);
    expect(report.streams[0]!.error).toBeUndefined();
  });

  it('waits out an in_progress answer, handing the signal to every replay', async () => {
    const { client } = api({ events: { dr_1: [0] } });
    const { receiver: r, replayed } = receiver('off', {
      'dr_1-e0': [fail(409, 'in_progress'), fail(409, 'in_progress')],
    });
    const controller = new AbortController();
    const report = await recover(
      { client, receiver: r, requestIds: ['dr_1'] },
      { reactivate: false, signal: controller.signal },
    );
    expect(report.totals).toMatchObject({ replayed: 1, processed: 1, failed: 0 });
    expect(replayed).toHaveLength(3);
    for (const call of replayed) expect(call.signal).toBe(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('waits out an in_progress answer without a signal too', async () => {
    const { client } = api({ events: { dr_1: [0, 1] } });
    const { receiver: r, replayed } = receiver('enforce', { 'dr_1-e1': [fail(409, 'in_progress')] });
    const report = await recover({ client, receiver: r, requestIds: ['dr_1'] }, { reactivate: false });
    expect(report).toMatchObject({ ok: true, totals: { replayed: 2, processed: 2, failed: 0 } });
    expect(replayed.map((call) => call.eventId)).toEqual(['dr_1-e0', 'dr_1-e1', 'dr_1-e1']);
  });

  it('an abort during an in_progress wait rejects with the reason at once', async () => {
    // On fake timers: a loaded machine only makes real waits longer, so a bound on them fails at random.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { client } = api({ events: { dr_1: [0] } });
      const { receiver: r, replayed } = receiver('off', { 'dr_1-e0': fail(409, 'in_progress') });
      const controller = new AbortController();
      const reason = new Error('shutting down');
      let outcome: unknown = 'pending';
      void recover(
        { client, receiver: r, requestIds: ['dr_1'] },
        { reactivate: false, signal: controller.signal },
      ).then(
        () => (outcome = 'resolved'),
        (caught: unknown) => (outcome = caught),
      );
      await vi.advanceTimersByTimeAsync(120);
      // Replayed at once and after the first wait (50 ms); the second one (100 ms) is under way.
      expect(replayed).toHaveLength(2);
      expect(outcome).toBe('pending');
      controller.abort(reason);
      // No time passes from here: only the abort can end the wait.
      await vi.advanceTimersByTimeAsync(0);
      expect(outcome).toBe(reason);
      expect(replayed).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an abort during an in_progress wait leaves no timer running and no listener on the signal', async () => {
    // A timer left pending holds a Node process open until the wait would have ended.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { client } = api({ events: { dr_1: [0] } });
      const { receiver: r, replayed } = receiver('off', { 'dr_1-e0': fail(409, 'in_progress') });
      const controller = new AbortController();
      const reason = new Error('shutting down');
      const recovery = recover(
        { client, receiver: r, requestIds: ['dr_1'] },
        { reactivate: false, signal: controller.signal },
      ).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      await vi.advanceTimersByTimeAsync(20);
      expect(replayed).toHaveLength(1);
      controller.abort(reason);
      expect(await recovery).toBe(reason);
      expect(vi.getTimerCount()).toBe(0);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('when a stream stops', () => {
  const run = async (mode: 'off' | 'enforce', answers: Record<string, ReceiveResult | ReceiveResult[]>) => {
    const { client } = api({ events: { dr_1: [0, 1, 2, 3] } });
    const { receiver: r, replayed } = receiver(mode, answers);
    const report = await recover({ client, receiver: r, requestIds: ['dr_1'] }, { reactivate: false });
    return { stream: report.streams[0]!, replayed: replayed.map((call) => call.eventId) };
  };

  it('with ordering off, every event is tried past a failure', async () => {
    const { stream, replayed } = await run('off', { 'dr_1-e1': fail(500, 'handler_failed') });
    expect(replayed).toHaveLength(4);
    expect(stream).toMatchObject({ failed: 1, held: 0, processed: 3 });
  });

  it.each([
    ['a handler failure', fail(500, 'handler_failed')],
    ['a failure without a code', fail(500)],
    ['a 401 that is not about the attestation', fail(401, 'signature_mismatch')],
    ['a 401 without a code', fail(401)],
    ['an attestation code on another status', fail(500, 'attestation_store_error' as ReceiveResult['code'])],
  ])('under enforce, %s holds the events behind it', async (_what, answer) => {
    const { stream, replayed } = await run('enforce', { 'dr_1-e1': answer });
    expect(replayed).toEqual(['dr_1-e0', 'dr_1-e1']);
    expect(stream).toMatchObject({ failed: 1, held: 2, processed: 1 });
    expect(stream.error).toBeUndefined();
    expect(stream.failures[0]).toEqual({
      eventId: 'dr_1-e1',
      seq: 1,
      code: answer.code ?? 'failed',
      status: answer.status,
    });
  });

  it('under enforce, a late event that found no onGap handler holds nothing up', async () => {
    const { stream, replayed } = await run('enforce', { 'dr_1-e1': fail(409, 'late_unhandled') });
    expect(replayed).toHaveLength(4);
    expect(stream).toMatchObject({ failed: 1, held: 0 });
  });

  it('under enforce, a refused attestation lets the next event be tried once; a second refusal stops there', async () => {
    const { stream, replayed } = await run('enforce', {
      'dr_1-e1': fail(401, 'attestation_invalid'),
      'dr_1-e2': fail(401, 'attestation_missing'),
    });
    expect(replayed).toEqual(['dr_1-e0', 'dr_1-e1', 'dr_1-e2']);
    expect(stream).toMatchObject({ failed: 2, held: 1 });
    expect(stream.failures.map((failure) => failure.permanent)).toEqual([undefined, undefined]);
  });

  it('the probe failing for good marks the refused event permanent; failing otherwise does not', async () => {
    const gone = await run('enforce', {
      'dr_1-e1': fail(401, 'attestation_invalid'),
      'dr_1-e2': fail(409, 'backfill_unfillable'),
    });
    expect(gone.stream.failures.map((failure) => failure.permanent)).toEqual([true, true]);
    const transient = await run('enforce', {
      'dr_1-e1': fail(401, 'attestation_invalid'),
      'dr_1-e2': fail(500, 'handler_failed'),
    });
    expect(transient.stream.failures.map((failure) => failure.permanent)).toEqual([undefined, undefined]);
    expect(transient.stream).toMatchObject({ failed: 2, held: 1 });
  });

  it('a receiver that says skipsUnfillable: false is not probed: a refused attestation holds the events behind it', async () => {
    const { client } = api({ events: { dr_1: [0, 1, 2, 3] } });
    const { receiver: inner, replayed } = receiver('enforce', { 'dr_1-e1': fail(401, 'attestation_invalid') });
    const remote = { ...inner, skipsUnfillable: false };
    const report = await recover({ client, receiver: remote, requestIds: ['dr_1'] }, { reactivate: false });
    expect(replayed.map((call) => call.eventId)).toEqual(['dr_1-e0', 'dr_1-e1']);
    expect(report.streams[0]).toMatchObject({ failed: 1, skipped: 0, held: 2, processed: 1 });
    expect(report.ok).toBe(false);
  });

  it('the probe succeeding means the refused event was skipped: it counts as skipped, not failed', async () => {
    const { stream } = await run('enforce', { 'dr_1-e1': fail(401, 'attestation_invalid') });
    expect(stream).toMatchObject({ failed: 0, skipped: 1, processed: 3, held: 0 });
    expect(stream.failures).toEqual([
      { eventId: 'dr_1-e1', seq: 1, code: 'attestation_invalid', status: 401, skipped: true },
    ]);
  });
});

describe('what the delivery log says the API must serve', () => {
  it('an unacknowledged event the events API leaves out is a failure, event_not_served, and the report is not ok', async () => {
    const { client } = api({ log: { dr_1: [acked('dr_1', 1), unacked('dr_1', 2)] }, events: { dr_1: [3, 4] } });
    const { receiver: r, replayed } = receiver('off');
    const report = await recover({ client, receiver: r, requestIds: ['dr_1'] }, { reactivate: false });
    expect(replayed.map((call) => call.eventId)).toEqual(['dr_1-e3', 'dr_1-e4']);
    expect(report.ok).toBe(false);
    expect(report.streams[0]).toMatchObject({ replayed: 2, processed: 2, failed: 1, unacknowledged: 1 });
    expect(report.streams[0]!.failures).toEqual([{ eventId: 'dr_1-e2', seq: 2, code: 'event_not_served', status: 0 }]);
  });

  it('an unacknowledged event held behind a failing one was served: held, not event_not_served', async () => {
    const { client } = api({ log: { dr_1: [unacked('dr_1', 1), unacked('dr_1', 2)] }, events: { dr_1: [1, 2] } });
    const { receiver: r } = receiver('enforce', { 'dr_1-e1': fail(500, 'handler_failed') });
    const report = await recover({ client, receiver: r, requestIds: ['dr_1'] }, { reactivate: false });
    expect(report.streams[0]).toMatchObject({ failed: 1, held: 1 });
    expect(report.streams[0]!.failures.map((failure) => failure.code)).toEqual(['handler_failed']);
  });

  it('a stream whose events could not be read reports that error, not the events as not served', async () => {
    const { client } = api({ log: { dr_1: [unacked('dr_1', 1)] } });
    const broken = {
      ...client,
      events: async function* () {
        yield* [];
        throw new Error('connection reset');
      },
    } as unknown as typeof client;
    const report = await recover(
      { client: broken, receiver: receiver('off').receiver, requestIds: ['dr_1'] },
      { reactivate: false },
    );
    expect(report.ok).toBe(false);
    expect(report.streams[0]!.error).toMatchObject({ code: 'recovery_failed' });
    expect(report.streams[0]!.failures).toEqual([]);
  });
});

describe('progress', () => {
  it('reports streams_found at index -1, and each report carries the failures so far', async () => {
    const { client } = api({ events: { dr_1: [0, 1, 2] } });
    const { receiver: r } = receiver('off', { 'dr_1-e0': fail(500, 'handler_failed') });
    const reports: RecoverProgress[] = [];
    await recover(
      { client, receiver: r, requestIds: ['dr_1'] },
      { reactivate: false, progressEvery: 1, onProgress: (p) => reports.push(p) },
    );
    expect(reports.map((p) => [p.kind, p.streamIndex, p.streamCount])).toEqual([
      ['streams_found', -1, 1],
      ['stream_started', 0, 1],
      ['events', 0, 1],
      ['events', 0, 1],
      ['events', 0, 1],
      ['stream_done', 0, 1],
    ]);
    expect(reports.slice(2).map((p) => p.stream!.failures.length)).toEqual([1, 1, 1, 1]);
    expect(reports.at(-1)!.totals).toMatchObject({ replayed: 3, failed: 1 });
  });
});

describe('reactivation', () => {
  it('retries the reactivate POST', async () => {
    const { client, paths } = api({ events: { dr_1: [0] }, reactivate: [503, 200] });
    const report = await recover({ client, receiver: receiver('off').receiver, requestIds: ['dr_1'] });
    expect(report).toMatchObject({ ok: true, reactivated: true });
    expect(paths.filter((path) => path.endsWith('/reactivate'))).toHaveLength(2);
  });

  it('a failed reactivation is reported, and the recovery is not ok', async () => {
    const { client } = api({ events: { dr_1: [0] }, reactivate: [403] });
    const report = await recover({ client, receiver: receiver('off').receiver, requestIds: ['dr_1'] });
    expect(report.ok).toBe(false);
    expect(report.totals.processed).toBe(1);
    expect(report.reactivated).toEqual({
      code: 'forbidden',
      status: 403,
      message:
        'POST /api/v1/kyb/webhook-endpoint/reactivate: the KYB API answered 403 (forbidden). Check the apiKey option: it is sent as the raw Authorization header.',
    });
  });
});

describe('abort', () => {
  it.each(['deliveries', 'events', 'reactivate'] as const)(
    'an abort while %s is in flight rejects with the reason at once',
    async (hang) => {
      // On fake timers: the call's timeout cannot fire, so only the abort can end it.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const { client, paths } = api({ events: { dr_1: [0] }, hang });
        const controller = new AbortController();
        const reason = new Error('shutting down');
        const options: RecoverOptions = { signal: controller.signal, reactivate: hang === 'reactivate' };
        let outcome: unknown = 'pending';
        void recover({ client, receiver: receiver('off').receiver, requestIds: ['dr_1'] }, options).then(
          () => (outcome = 'resolved'),
          (caught: unknown) => (outcome = caught),
        );
        await vi.advanceTimersByTimeAsync(30);
        expect(paths.at(-1)).toContain(`/${hang}`);
        expect(outcome).toBe('pending');
        controller.abort(reason);
        // No time passes from here.
        await vi.advanceTimersByTimeAsync(0);
        expect(outcome).toBe(reason);
      } finally {
        vi.useRealTimers();
      }
    },
  );
});

describe('stream errors', () => {
  it.each([
    [
      new Error('connect ECONNREFUSED 10.0.0.5:5432'),
      {
        code: 'recovery_failed',
        status: null,
        message: 'the stream could not be recovered (Error); see the cause in your store or network logs',
      },
    ],
    [
      'a string',
      {
        code: 'recovery_failed',
        status: null,
        message: 'the stream could not be recovered (string); see the cause in your store or network logs',
      },
    ],
    [
      new KybWebhookError('config_invalid', 'the store is closed'),
      { code: 'config_invalid', status: null, message: 'the store is closed' },
    ],
  ])('a store failure %s is the stream error, and the other streams go on', async (thrown, error) => {
    const { client } = api({ events: { dr_1: [0], dr_2: [0] } });
    const store = cursorStore({ dr_1: thrown });
    const { receiver: r } = receiver('enforce');
    const report = await recover({ client, receiver: r, store, requestIds: ['dr_1', 'dr_2'] }, { reactivate: false });
    expect(report.streams[0]!.error).toEqual(error);
    expect(report.streams[1]).toMatchObject({ processed: 1 });
    expect(report.streams[1]!.error).toBeUndefined();
    expect(report.ok).toBe(false);
  });
});

describe('which streams, with since', () => {
  it('reads every page of the store’s active streams, passing the page cursor back', async () => {
    const calls: unknown[] = [];
    const store = {
      getCursor: async () => null,
      listStreams: async (options: { after?: string }) => {
        calls.push(options);
        if (calls.length > 5) throw new Error('paged forever');
        return options.after === undefined
          ? { streams: [{ streamId: 'dr_a' }, { streamId: 'dr_b' }], next: 'dr_b' }
          : { streams: [{ streamId: 'dr_c' }], next: undefined };
      },
    } as unknown as StreamCursorStore;
    const { client } = api({});
    const report = await recover(
      { client, receiver: receiver('off').receiver, store, since: 1000, requestIds: ['dr_z', 'dr_b'] },
      { reactivate: false },
    );
    expect(report.streams.map((stream) => stream.requestId)).toEqual(['dr_z', 'dr_b', 'dr_a', 'dr_c']);
    expect(calls).toStrictEqual([
      { activeSince: 1000, limit: 1000 },
      { activeSince: 1000, limit: 1000, after: 'dr_b' },
    ]);
  });
});

describe('arguments', () => {
  const { client } = api({});
  const r = receiver('off').receiver;
  const store = cursorStore({});
  const fix = 'call recover({ client, receiver, requestIds: [...] }) or recover({ client, receiver, store, since })';

  it.each([
    ['no target', undefined, `recover: the first argument must be an object: ${fix}.`],
    ['a string target', 'dr_1', `recover: the first argument must be an object: ${fix}.`],
    [
      'no client',
      { receiver: r, requestIds: ['a'] },
      'recover: `client` must be a KYB client: createKybClient({ baseUrl, apiKey }).',
    ],
    [
      'a client without deliveries',
      { client: { ...client, deliveries: undefined }, receiver: r, requestIds: ['a'] },
      'recover: `client` must be a KYB client',
    ],
    [
      'a client without events',
      { client: { ...client, events: 1 }, receiver: r, requestIds: ['a'] },
      'recover: `client` must be a KYB client',
    ],
    [
      'a client without reactivate',
      { client: { ...client, reactivate: null }, receiver: r, requestIds: ['a'] },
      'recover: `client` must be a KYB client',
    ],
    [
      'no receiver',
      { client, requestIds: ['a'] },
      'recover: `receiver` must be the receiver your webhooks go through (createReceiver(...)), handlers registered.',
    ],
    [
      'a receiver without replay',
      { client, receiver: { orderingMode: 'off' }, requestIds: ['a'] },
      'recover: `receiver` must be the receiver',
    ],
    ['no streams named', { client, receiver: r }, `recover: say which streams: ${fix}.`],
    [
      'requestIds not an array',
      { client, receiver: r, requestIds: 'dr_1' },
      'recover: `requestIds` must be an array of request ids (non-empty strings).',
    ],
    [
      'an empty request id',
      { client, receiver: r, requestIds: ['dr_1', ''] },
      'recover: `requestIds` must be an array of request ids',
    ],
    [
      'a request id that is no string',
      { client, receiver: r, requestIds: ['dr_1', 7] },
      'recover: `requestIds` must be an array of request ids',
    ],
    [
      'since NaN',
      { client, receiver: r, store, since: Number.NaN },
      'recover: `since` must be a Date or Unix milliseconds.',
    ],
    [
      'since an invalid Date',
      { client, receiver: r, store, since: new Date('x') },
      'recover: `since` must be a Date or Unix milliseconds.',
    ],
    [
      'since a string',
      { client, receiver: r, store, since: '2026-01-01' },
      'recover: `since` must be a Date or Unix milliseconds.',
    ],
    [
      'since without a store',
      { client, receiver: r, since: 0 },
      "recover: `since` needs `store`, the receiver's store, which lists the streams it saw (every built-in store does).",
    ],
    [
      'since with a store that lists nothing',
      { client, receiver: r, store, since: 0 },
      'recover: `since` needs `store`',
    ],
    [
      'a store without getCursor',
      { client, receiver: r, store: {}, requestIds: ['a'] },
      "recover: `store` must be the receiver's store (createMemoryStore, createRedisStore, createPostgresStore …).",
    ],
    [
      'a store that is a function, even one with getCursor',
      { client, receiver: r, store: Object.assign(() => null, { getCursor: async () => null }), requestIds: ['a'] },
      "recover: `store` must be the receiver's store",
    ],
  ])('refuses %s, saying what to pass', async (_what, target, message) => {
    const error = await recover(target as RecoverTarget).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect((error as Error).message).toContain(message);
  });

  it.each([
    [{ progressEvery: 0 }, 'recover: `progressEvery` must be a positive integer, e.g. 100.'],
    [{ progressEvery: 2.5 }, 'recover: `progressEvery` must be a positive integer, e.g. 100.'],
    [{ concurrency: 0 }, 'recover: `concurrency` must be a positive integer, e.g. 1.'],
    [{ reactivate: 'no' }, 'recover: `reactivate` must be true or false (default true).'],
    [{ reactivate: 0 }, 'recover: `reactivate` must be true or false (default true).'],
    [{ onProgress: 'log' }, 'recover: `onProgress` must be a function'],
    [{ signal: {} }, 'recover: `signal` must be an AbortSignal'],
    [{ signal: true }, 'recover: `signal` must be an AbortSignal'],
  ])('refuses the options %j: %s', async (options, message) => {
    const error = await recover({ client, receiver: r, requestIds: ['a'] }, options as RecoverOptions).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect((error as Error).message).toContain(message);
  });

  it('refuses options that are not an object, and a receiver whose skipsUnfillable is not a boolean', async () => {
    await expect(recover({ client, receiver: r, requestIds: ['a'] }, null as never)).rejects.toThrow(
      'recover: the options must be an object',
    );
    await expect(
      recover({ client, receiver: { ...r, skipsUnfillable: 'no' as never }, requestIds: ['a'] }),
    ).rejects.toThrow('recover: `receiver.skipsUnfillable` must be true or false');
  });

  it('takes an AbortSignal-like object from another realm', async () => {
    const controller = new AbortController();
    const foreign = {
      aborted: false,
      throwIfAborted: () => controller.signal.throwIfAborted(),
      addEventListener: controller.signal.addEventListener.bind(controller.signal),
      removeEventListener: controller.signal.removeEventListener.bind(controller.signal),
    } as unknown as AbortSignal;
    const { client: c } = api({ events: { a: [0] } });
    const report = await recover({ client: c, receiver: r, requestIds: ['a'] }, { signal: foreign, reactivate: false });
    expect(report.ok).toBe(true);
  });
});
