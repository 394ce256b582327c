/**
 * Issue 26, sections 2 and 3: stalls that cannot end by themselves say so and offer a recorded, opt-in skip; backfill
 * cannot be turned against the merchant (one per stream, a short memory of gaps the API could not fill, a loop that
 * yields and gives up); detect learns where a stream starts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, KybApiError, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { BackfillGate } from './backfill-guard.js';
import type { DedupeStore } from '../store/dedupe.js';
import { KybWebhookError, rejection } from '../errors.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { FetchEventsAfter, GapReport, OrderingOptions, UnfillableReport } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const SECRET = 'unfillable-secret';
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
  stranger = await createTestSigner({ now: NOW });
});

/** seq 0 pending, seq 1 an attested release, seq 2 and 3 pending: seq 1 is the event the API may lose. */
async function attestedStream(): Promise<TestEnvelope[]> {
  const events = testStream([
    'kyb.data_request.pending_approval',
    'kyb.data_request.released',
    'kyb.data_request.pending_approval',
    'kyb.data_request.pending_approval',
  ]);
  return Promise.all(events.map((event) => signer.withAttestation(event)));
}

interface Setup {
  ordering?: Partial<OrderingOptions>;
  api?: TestEnvelope[];
  overrides?: Partial<ReceiverOptions>;
  store?: StreamCursorStore;
}

function setup(options: Setup = {}) {
  const api = options.api ?? [];
  const fetches: [string, number][] = [];
  const store = options.store ?? createMemoryStore({ now: () => NOW });
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  const clock = { ms: NOW };
  const fetchEventsAfter: FetchEventsAfter = async function* (streamId, afterSeq) {
    fetches.push([streamId, afterSeq]);
    for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
  };
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => clock.ms,
    logger: (entry) => logs.push(entry),
    store,
    ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, ...options.ordering }),
    ...options.overrides,
  });
  receiver.onAny((event) => {
    seen.push(event.seq);
  });
  receiver.onGap((report) => {
    gaps.push(report);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, api, fetches, store, logs, seen, gaps, clock };
}

const answerOf = (answer: { status: number; code?: string | undefined }) => ({
  status: answer.status,
  code: answer.code,
});
const stallLines = (logs: LogEntry[]) =>
  logs.filter((entry) => entry.code === 'stream_unfillable' && entry.level === 'error');

describe('A. a gap that can never be filled verifiably', () => {
  it('a purged release served without its attestation: 502 backfill_unfillable, one error line that says it is permanent and the way out, reported to onGap', async () => {
    const events = await attestedStream();
    const purged = { ...events[1]!, attestation: undefined };
    const { deliver, seen, store, logs, gaps, clock, fetches } = setup({ api: [events[0]!, purged, events[2]!] });
    await deliver(events[0]!);
    for (let retry = 0; retry < 3; retry++) {
      expect(answerOf(await deliver(events[3]!))).toEqual({ status: 502, code: 'backfill_unfillable' });
      clock.ms += 5_000; // past backfillRetryAfterMs: each retry asks the API again
    }
    expect(fetches).toHaveLength(3);
    expect(seen).toEqual([0]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
    const lines = stallLines(logs);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toContain(
      `stream ${events[0]!.stream_id} is stalled for good at seq 1 (event ${events[1]!.event_id})`,
    );
    expect(lines[0]!.message).toMatch(/without its attestation.*will not end by itself.*ordering\.onUnfillable/);
    const unfillable = gaps.filter((gap) => gap.kind === 'unfillable');
    expect(unfillable).toHaveLength(3);
    expect(unfillable[0]).toMatchObject({
      kind: 'unfillable',
      mode: 'enforce',
      reason: 'attestation_missing',
      missingSeq: 1,
      missingEventId: events[1]!.event_id,
      seq: 3,
      expectedSeq: 1,
    });
  });

  it('a release whose signing key was retired from the JWKS (fetched just now): 502 backfill_unfillable, reason key_retired', async () => {
    const events = await attestedStream();
    const retired = { ...events[1]!, attestation: await stranger.attest(events[1]!) };
    const jwksFetch = (async () =>
      new Response(JSON.stringify(signer.jwks), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const { deliver, gaps, logs } = setup({
      api: [events[0]!, retired, events[2]!],
      overrides: {
        attestation: {
          issuer: signer.issuer,
          audience: signer.audience,
          jwksUrl: 'https://kyb.example.com/.well-known/kyb-jwks.json',
          fetch: jwksFetch,
        },
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[3]!))).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps.find((gap) => gap.kind === 'unfillable')).toMatchObject({ reason: 'key_retired', missingSeq: 1 });
    expect(stallLines(logs)[0]!.message).toMatch(/no longer publishes/);
  });

  it('a JWKS outage is not a retired key: 503 jwks_unavailable, nothing reported as unfillable', async () => {
    const events = await attestedStream();
    const down = (async () => new Response('down', { status: 503 })) as typeof fetch;
    const { deliver, gaps, logs } = setup({
      api: events,
      overrides: {
        attestation: {
          issuer: signer.issuer,
          audience: signer.audience,
          jwksUrl: 'https://kyb.example.com/.well-known/kyb-jwks.json',
          fetch: down,
        },
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[2]!))).toEqual({ status: 503, code: 'jwks_unavailable' });
    expect(gaps.filter((gap) => gap.kind === 'unfillable')).toEqual([]);
    expect(stallLines(logs)).toEqual([]);
  });

  it.each([
    [
      'the client’s 410 payload_expired',
      () =>
        new KybApiError({
          status: 410,
          code: 'payload_expired',
          message: 'gone',
          operation: 'GET /events',
          attempts: 1,
        }),
    ],
    [
      'the client’s 404 request_not_found',
      () =>
        new KybApiError({
          status: 404,
          code: 'request_not_found',
          message: 'no such request',
          operation: 'GET /events',
          attempts: 1,
        }),
    ],
    ['an error with code gone', () => Object.assign(new Error('gone'), { code: 'gone' })],
  ])('a fetcher that throws %s: 502 backfill_unfillable, reason gone', async (_name, error) => {
    const events = await attestedStream();
    const { deliver, gaps } = setup({
      ordering: {
        fetchEventsAfter: () => {
          throw error();
        },
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[2]!))).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps.find((gap) => gap.kind === 'unfillable')).toMatchObject({ reason: 'gone', missingSeq: 1 });
  });

  it('a fetcher that fails otherwise (503, network) stays transient: 503 backfill_unavailable', async () => {
    const events = await attestedStream();
    const { deliver, gaps } = setup({
      ordering: {
        fetchEventsAfter: () => {
          throw new KybApiError({
            status: 503,
            code: 'service_unavailable',
            message: 'busy',
            operation: 'GET /events',
            attempts: 3,
          });
        },
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[2]!))).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(gaps.filter((gap) => gap.kind === 'unfillable')).toEqual([]);
  });
});

describe('B. the recorded way out: ordering.onUnfillable', () => {
  it('skips the seq when the hook answers { skip }, records it with its reason in the store, and goes on with the backfill', async () => {
    const events = await attestedStream();
    const purged = { ...events[1]!, attestation: undefined };
    const decided: UnfillableReport[] = [];
    const { deliver, seen, store, logs } = setup({
      api: [events[0]!, purged, events[2]!],
      ordering: {
        onUnfillable: (report) => {
          decided.push(report);
          return { skip: 'release purged, re-requested as dr_new (ops, ticket 42)' };
        },
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[3]!))).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 2, 3]);
    expect(decided.map(({ reason, missingSeq }) => ({ reason, missingSeq }))).toEqual([
      { reason: 'attestation_missing', missingSeq: 1 },
    ]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(3);
    expect(await store.listSkips!(events[0]!.stream_id)).toEqual([
      {
        seq: 1,
        reason: 'release purged, re-requested as dr_new (ops, ticket 42)',
        eventId: events[1]!.event_id,
        skippedAt: NOW,
      },
    ]);
    expect(logs.filter((entry) => entry.code === 'stream_skipped').map((entry) => entry.level)).toEqual(['warn']);
    expect(stallLines(logs)).toEqual([]);
  });

  it('skips seqs a fetcher says are gone, asking once per seq, and reads on after them', async () => {
    const events = await attestedStream();
    let calls = 0;
    const { deliver, seen, store } = setup({
      ordering: {
        fetchEventsAfter: async function* (_streamId, afterSeq) {
          calls++;
          if (afterSeq < 1)
            throw new KybApiError({
              status: 410,
              code: 'payload_expired',
              message: 'gone',
              operation: 'GET /events',
              attempts: 1,
            });
          yield* events.filter((event) => event.seq > afterSeq);
        },
        onUnfillable: () => ({ skip: 'checked by hand' }),
      },
    });
    await deliver(events[0]!);
    expect(answerOf(await deliver(events[3]!))).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 2, 3]);
    expect(calls).toBe(2);
    expect((await store.listSkips!(events[0]!.stream_id)).map(({ seq, reason }) => ({ seq, reason }))).toEqual([
      { seq: 1, reason: 'checked by hand' },
    ]);
  });

  it.each<[string, OrderingOptions['onUnfillable']]>([
    ['no hook (the default)', undefined],
    ["'wait'", () => 'wait'],
    ['nothing', () => undefined],
    ['a skip without a reason', () => ({ skip: '  ' })],
    ['a skip whose reason is not a string', () => ({ skip: 42 as unknown as string })],
    [
      'a throw',
      () => {
        throw new Error('policy service down');
      },
    ],
  ])(
    'never skips on %s: the stream waits, 502 backfill_unfillable, the cursor unmoved, nothing recorded',
    async (_name, onUnfillable) => {
      const events = await attestedStream();
      const purged = { ...events[1]!, attestation: undefined };
      const { deliver, seen, store } = setup({
        api: [events[0]!, purged, events[2]!],
        ordering: onUnfillable ? { onUnfillable } : {},
      });
      await deliver(events[0]!);
      expect(answerOf(await deliver(events[3]!))).toEqual({ status: 502, code: 'backfill_unfillable' });
      expect(seen).toEqual([0]);
      expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
      expect(await store.listSkips!(events[0]!.stream_id)).toEqual([]);
    },
  );

  it('is never reached by a delivery that fails authentication: 401, no API call, no decision', async () => {
    const events = await attestedStream();
    let asked = 0;
    const { deliver, receiver, fetches } = setup({
      api: [events[0]!, { ...events[1]!, attestation: undefined }],
      ordering: { onUnfillable: () => (asked++, { skip: 'x' }) },
    });
    await deliver(events[0]!);
    const { headers, body } = await signer.sign(events[3]!, { secret: 'not-the-secret' });
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(401);
    expect({ asked, fetches: fetches.length }).toEqual({ asked: 0, fetches: 0 });
  });

  function configError(options: Partial<ReceiverOptions>): string {
    try {
      createReceiver({ secrets: { '1': SECRET }, ...options });
    } catch (error) {
      if (error instanceof KybWebhookError && error.code === 'config_invalid') return error.message;
      throw error;
    }
    throw new Error('createReceiver accepted the options');
  }

  it('refuses onUnfillable with a store that cannot record a skip, saying what to use', () => {
    const { skipSeq: _skipSeq, listSkips: _listSkips, ...rest } = createMemoryStore();
    const store = rest as DedupeStore;
    expect(
      configError({
        store,
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [], onUnfillable: () => 'wait' }),
      }),
    ).toMatch(/`store` has no skipSeq.*onUnfillable/);
  });

  it('refuses onUnfillable outside enforce, and one that is not a function', () => {
    expect(configError({ ordering: streamOrdering({ mode: 'detect', onUnfillable: () => 'wait' }) })).toMatch(
      /ordering\.onUnfillable` is only called under mode 'enforce'/,
    );
    expect(
      configError({
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [], onUnfillable: 'skip' as never }),
      }),
    ).toMatch(/ordering\.onUnfillable/);
  });
});

describe('C. backfill cannot be turned against the merchant', () => {
  it('200 concurrent replays of one authenticated delivery ahead of its cursor cost one events call; 200 serial ones no more; the next interval one more', async () => {
    const events = await attestedStream();
    const { receiver, deliver, fetches, clock } = setup({ api: [] });
    await deliver(events[0]!);
    const { headers, body } = await signer.sign(events[3]!);
    const replay = () => receiver.receive({ method: 'POST', headers, body });
    const concurrent = await Promise.all(Array.from({ length: 200 }, replay));
    expect(new Set(concurrent.map((answer) => answer.code))).toEqual(new Set(['out_of_order']));
    for (let i = 0; i < 200; i++) expect((await replay()).code).toBe('out_of_order');
    expect(fetches.length).toBeLessThanOrEqual(2);
    expect(fetches).toHaveLength(1);
    clock.ms += 5_000;
    await replay();
    expect(fetches).toHaveLength(2);
  });

  it('a concurrent delivery of the same stream waits for the running backfill, then finds the gap closed', async () => {
    const events = await attestedStream();
    const { deliver, fetches, seen } = setup({ api: events });
    await deliver(events[0]!);
    const [third, second] = await Promise.all([deliver(events[3]!), deliver(events[2]!)]);
    expect([answerOf(third), answerOf(second)]).toEqual([
      { status: 200, code: undefined },
      { status: 200, code: 'duplicate' },
    ]);
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(fetches).toHaveLength(1);
  });

  it('backfillRetryAfterMs: 0 asks the API every time', async () => {
    const events = await attestedStream();
    const { deliver, fetches } = setup({ api: [], ordering: { backfillRetryAfterMs: 0 } });
    await deliver(events[0]!);
    for (let i = 0; i < 3; i++) await deliver(events[2]!);
    expect(fetches).toHaveLength(3);
  });

  it('a sync fetcher that repeats a seq forever yields to the event loop and gives up with 502 backfill_invalid after 1,000 such events', async () => {
    const events = await attestedStream();
    const order: string[] = [];
    const { deliver } = setup({
      ordering: {
        backfillTimeoutMs: 1_000,
        fetchEventsAfter: function* () {
          for (;;) yield structuredClone(events[0]!);
        },
      },
    });
    await deliver(events[0]!);
    const timer = setTimeout(() => order.push('timer'), 0);
    const answer = await deliver(events[2]!);
    order.push('answer');
    clearTimeout(timer);
    expect(answerOf(answer)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(order).toEqual(['timer', 'answer']);
  });

  it('says why it gave up: more than 1,000 events that do not advance the backfill', async () => {
    const events = await attestedStream();
    const { deliver, logs } = setup({
      ordering: { fetchEventsAfter: () => Array.from({ length: 5_000 }, () => structuredClone(events[0]!)) },
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect(logs.find((entry) => entry.code === 'backfill_invalid')?.detail).toMatch(
      /more than 1000 events .* do not advance the backfill/,
    );
  });

  it.each([-1, 1.5, '5s', 3_600_001])(
    'refuses backfillRetryAfterMs %s with config_invalid, naming the option',
    (value) => {
      expect(() =>
        createReceiver({
          secrets: { '1': SECRET },
          ordering: streamOrdering({
            mode: 'enforce',
            fetchEventsAfter: () => [],
            backfillRetryAfterMs: value as number,
          }),
        }),
      ).toThrow(/ordering\.backfillRetryAfterMs` must be a whole number of milliseconds/);
    },
  );

  it('remembers at most 10,000 failed gaps, oldest forgotten first', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    gate.settled('dr_first', 1, rejection('out_of_order'));
    for (let i = 0; i < 10_000; i++) gate.settled(`dr_${i}`, 1, rejection('out_of_order'));
    expect(gate.recentFailure('dr_first', 1)).toBeUndefined();
    expect(gate.recentFailure('dr_9999', 1)?.failure.code).toBe('out_of_order');
  });
});

describe('D. detect learns where a stream starts', () => {
  function detect() {
    const seen: number[] = [];
    const reports: GapReport[] = [];
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      ordering: streamOrdering({ mode: 'detect' }),
    });
    receiver.onAny((event) => {
      seen.push(event.seq);
    });
    receiver.onGap((report) => {
      reports.push(report);
    });
    const deliver = async (envelope: TestEnvelope) => {
      const { headers, body } = await signer.sign(envelope);
      return receiver.receive({ method: 'POST', headers, body });
    };
    return { deliver, seen, reports };
  }
  const pending = (seq: number, streamId: string): TestEnvelope => ({
    ...testStream(['kyb.data_request.pending_approval'], { stream_id: streamId })[0]!,
    seq,
  });

  it('with the default firstSeq 0, a new stream whose first event is seq 1 reports no gap', async () => {
    const { deliver, reports, seen } = detect();
    for (const seq of [1, 2, 3]) expect((await deliver(pending(seq, 'dr_starts_at_one'))).status).toBe(200);
    expect({ seen, reports }).toEqual({ seen: [1, 2, 3], reports: [] });
  });

  it('still reports a new stream whose first event is seq 2 as a gap, and a stream starting at 0 as none', async () => {
    const { deliver, reports } = detect();
    await deliver(pending(0, 'dr_starts_at_zero'));
    await deliver(pending(1, 'dr_starts_at_zero'));
    await deliver(pending(2, 'dr_starts_late'));
    expect(reports.map(({ kind, streamId, seq, expectedSeq }) => ({ kind, streamId, seq, expectedSeq }))).toEqual([
      { kind: 'gap', streamId: 'dr_starts_late', seq: 2, expectedSeq: 0 },
    ]);
  });
});

// What the log and the answer say for each of onUnfillable's answers and each skip outcome (gaps.ts), so an operator
// reading the log knows which way the stream went; these also pin the mutation survivors of the first run.
describe('B. what onUnfillable’s answers and a skip’s outcome say', () => {
  async function stalled(ordering: Partial<OrderingOptions>, store?: StreamCursorStore) {
    const events = await attestedStream();
    const purged = { ...events[1]!, attestation: undefined };
    const rig = setup({ api: [events[0]!, purged, events[2]!], ordering, ...(store ? { store } : {}) });
    await rig.deliver(events[0]!);
    const answer = answerOf(await rig.deliver(events[3]!));
    const hookLines = rig.logs
      .filter((entry) => entry.code === 'stream_unfillable' && entry.message.startsWith('ordering.onUnfillable'))
      .map((entry) => `${entry.level} ${entry.message}`);
    return { ...rig, events, answer, hookLines };
  }

  it.each<[string, OrderingOptions['onUnfillable']]>([
    ["'wait'", () => 'wait'],
    ['nothing', () => undefined],
  ])('%s waits without a complaint: the stall line only', async (_name, onUnfillable) => {
    const { answer, hookLines, logs } = await stalled({ onUnfillable });
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(hookLines).toEqual([]);
    expect(stallLines(logs)).toHaveLength(1);
  });

  it('a hook that throws: the stream waits, and the log says so at error', async () => {
    const { answer, hookLines } = await stalled({
      onUnfillable: () => {
        throw new Error('policy service down');
      },
    });
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(hookLines).toEqual(['error ordering.onUnfillable threw; the stream waits']);
  });

  it('a hook that does not answer within handlerTimeoutMs: the stream waits, and the log says so', async () => {
    const events = await attestedStream();
    const rig = setup({
      api: [events[0]!, { ...events[1]!, attestation: undefined }, events[2]!],
      ordering: { onUnfillable: () => new Promise<never>(() => {}) },
      overrides: { handlerTimeoutMs: 20 },
    });
    await rig.deliver(events[0]!);
    expect(answerOf(await rig.deliver(events[3]!))).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(
      rig.logs.filter((entry) => entry.message.startsWith('ordering.onUnfillable')).map((entry) => entry.message),
    ).toEqual(['ordering.onUnfillable did not answer within handlerTimeoutMs; the stream waits']);
  });

  it.each<[string, unknown]>([
    ['a blank reason', { skip: '  ' }],
    ['a reason that is not a string', { skip: 42 }],
    ['a reason one character too long', { skip: 'x'.repeat(501) }],
    ['an object without skip', {}],
    ['another word', 'skip'],
  ])('%s: the stream waits, and the log says what to answer', async (_name, decision) => {
    const { answer, hookLines, store, events } = await stalled({ onUnfillable: () => decision as 'wait' });
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(hookLines).toEqual([
      "error ordering.onUnfillable must answer 'wait' or { skip: '<why, who decided>' } with a reason of 1 to 500 characters, which is recorded; the stream waits",
    ]);
    expect(await store.listSkips!(events[0]!.stream_id)).toEqual([]);
  });

  it('a reason of exactly 500 characters is recorded, and the warn line names the stream, the seq, the event and why', async () => {
    const reason = 'r'.repeat(500);
    const { answer, logs, store, events } = await stalled({ onUnfillable: () => ({ skip: reason }) });
    expect(answer).toEqual({ status: 200, code: undefined });
    expect((await store.listSkips!(events[0]!.stream_id)).map((skip) => skip.reason)).toEqual([reason]);
    const skipped = logs.filter((entry) => entry.code === 'stream_skipped');
    expect(skipped.map(({ level, message, detail, eventId }) => ({ level, message, detail, eventId }))).toEqual([
      {
        level: 'warn',
        message: `stream ${events[0]!.stream_id}: skipped seq 1 (event ${events[1]!.event_id}) as onUnfillable decided (attestation_missing); recorded in the store with its reason`,
        detail: expect.stringMatching(/^r+/), // the logger caps a detail's length
        eventId: events[3]!.event_id,
      },
    ]);
  });

  it('a skip the store refuses (the cursor moved meanwhile): 409 in_progress, nothing run past it', async () => {
    const memory = createMemoryStore({ now: () => NOW });
    const refusing: StreamCursorStore = Object.assign(Object.create(memory) as StreamCursorStore, {
      skipSeq: async () => false,
    });
    const { answer, seen } = await stalled({ onUnfillable: () => ({ skip: 'checked' }) }, refusing);
    expect(answer).toEqual({ status: 409, code: 'in_progress' });
    expect(seen).toEqual([0]);
  });

  it('a skip the store fails to record: 503 store_unavailable, nothing run past it', async () => {
    const memory = createMemoryStore({ now: () => NOW });
    const failing: StreamCursorStore = Object.assign(Object.create(memory) as StreamCursorStore, {
      skipSeq: async () => {
        throw new Error('connection reset');
      },
    });
    const { answer, seen } = await stalled({ onUnfillable: () => ({ skip: 'checked' }) }, failing);
    expect(answer).toEqual({ status: 503, code: 'store_unavailable' });
    expect(seen).toEqual([0]);
  });

  it('a fetcher that says gone is described by its status and code in the report and the stall line, never its message', async () => {
    const events = await attestedStream();
    const { deliver, gaps, logs } = setup({
      ordering: {
        fetchEventsAfter: () => {
          throw Object.assign(new Error('jane@example.com not found'), { status: 410, code: 'payload_expired' });
        },
      },
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    const report = gaps.find((gap) => gap.kind === 'unfillable');
    expect(report?.detail).toBe('fetchEventsAfter says it is gone (HTTP 410, code payload_expired)');
    expect(report).not.toHaveProperty('missingEventId');
    expect(stallLines(logs)[0]!.message).toContain(
      'is stalled for good at seq 1: fetchEventsAfter says it is gone (HTTP 410, code payload_expired)',
    );
    expect(JSON.stringify(logs)).not.toContain('jane@example.com');
  });
});
