// What a backfill does with each event the API serves (backfill.ts): the seqs it already has, events that fail
// verification at the seq it needs or elsewhere, a new stream's first event, and what the answer and the log say
// each time, so an operator reading the log knows which event stopped the stream and why.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { FetchEventsAfter, GapReport, OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 25, 9, 0, 0);
const SECRET = 'fetched-events-secret';
const PENDING = 'kyb.data_request.pending_approval';
const RELEASED = 'kyb.data_request.released';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** A stream of these types whose first seq is `first`, attested where due (a release can then be served purged). */
async function stream(types: (typeof PENDING | typeof RELEASED)[], first = 0): Promise<TestEnvelope[]> {
  const events = testStream(types).map((event) => ({ ...event, seq: event.seq + first }));
  return Promise.all(events.map((event) => signer.withAttestation(event)));
}

/** A release as the API serves it once its values were purged: without its attestation. */
const purged = (event: TestEnvelope): TestEnvelope => ({ ...event, attestation: undefined });

function setup(
  options: { ordering?: Partial<OrderingOptions>; api?: TestEnvelope[]; overrides?: Partial<ReceiverOptions> } = {},
) {
  const api = options.api ?? [];
  const store = createMemoryStore({ now: () => NOW });
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  const fetches: number[] = [];
  const fetchEventsAfter: FetchEventsAfter = async function* (streamId, afterSeq) {
    fetches.push(afterSeq);
    for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
  };
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
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
    const answer = await receiver.receive({ method: 'POST', headers, body });
    return { status: answer.status, code: answer.code };
  };
  return { receiver, deliver, store, logs, seen, gaps, fetches };
}

/** The detail of the log line that rejected a delivery with `code`. */
const rejectedDetail = (logs: LogEntry[], code: string) =>
  logs.filter((entry) => entry.message === `delivery rejected: ${code}`).map((entry) => entry.detail);
const firstSeqWarnings = (logs: LogEntry[]) =>
  logs.filter((entry) => entry.message.includes('not at ordering.firstSeq')).map((entry) => entry.message);

describe('events the backfill already has', () => {
  it.each<[string, unknown]>([
    ['a string', '0'],
    ['a fraction', 0.5],
    ['a negative number', -1],
  ])(
    'a fetched event whose seq is %s is not taken for one the backfill has: it is refused, 502 backfill_invalid',
    async (_name, seq) => {
      const events = await stream([PENDING, PENDING, PENDING]);
      const { deliver, seen, logs } = setup({ ordering: { fetchEventsAfter: () => [{ ...events[1]!, seq }] } });
      await deliver(events[0]!);
      expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
      expect(seen).toEqual([0]);
      expect(rejectedDetail(logs, 'backfill_invalid')).toEqual([
        expect.stringMatching(/^the fetched event for seq 1 was refused: envelope_invalid \(.+\)$/),
      ]);
    },
  );

  it('takes up to 1,000 events that do not advance it, then goes on with the ones that do', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const repeated = Array.from({ length: 1_000 }, () => structuredClone(events[0]!));
    const { deliver, seen } = setup({ ordering: { fetchEventsAfter: () => [...repeated, events[1]!] } });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2]);
  });

  it('gives up at the 1,001st, saying at which seq and before which one', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const repeated = Array.from({ length: 1_001 }, () => structuredClone(events[0]!));
    const { deliver, logs } = setup({ ordering: { fetchEventsAfter: () => [...repeated, events[1]!] } });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual([
      'the API answered more than 1000 events at or before seq 0, which do not advance the backfill; gave up at seq 1',
    ]);
  });
});

describe('what the log says when a backfill stops', () => {
  it('an event of another stream names the seq it was served for', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const foreign = { ...events[1]!, stream_id: 'dr_someone_else' };
    const { deliver, logs } = setup({ ordering: { fetchEventsAfter: () => [foreign] } });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual(['the API answered an event of another stream for seq 1']);
  });

  it("the delivered event's id served for another seq: refused, nothing run, and the delivery is not answered duplicate", async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    // An API that does not attest this type can relabel it: the id of the event being delivered, at the missing seq.
    const relabelled = { ...events[1]!, event_id: events[2]!.event_id };
    const { deliver, logs, seen } = setup({ ordering: { fetchEventsAfter: () => [relabelled] } });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual(["the API answered the delivered event's id for seq 1"]);
    expect(seen).toEqual([0]);
  });

  it('a fetcher that throws: fetchEventsAfter failed, its error attached but not its text in the detail', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const { deliver, logs } = setup({
      ordering: {
        fetchEventsAfter: () => {
          throw new Error('socket hang up');
        },
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 503, code: 'backfill_unavailable' });
    const line = logs.find((entry) => entry.message === 'delivery rejected: backfill_unavailable');
    expect({ detail: line?.detail, error: line?.error?.message }).toEqual({
      detail: 'fetchEventsAfter failed',
      error: 'socket hang up',
    });
  });

  it('a fetcher that never answers: the seqs it was waiting for, the limit, and where the retry goes on', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const { deliver, logs } = setup({
      ordering: {
        backfillTimeoutMs: 50,
        fetchEventsAfter: () => ({
          [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<unknown>>(() => {}) }),
        }),
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(rejectedDetail(logs, 'backfill_unavailable')).toEqual([
      'the backfill of seq 1 to 1 did not finish within backfillTimeoutMs (50 ms); the retry goes on from seq 1',
    ]);
  });

  it('a gap the API could not fill is answered again without a call, saying for how long and how it ended', async () => {
    const events = await stream([PENDING, PENDING, PENDING, PENDING]);
    const { deliver, logs, fetches } = setup({ api: [] });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 409, code: 'out_of_order' });
    expect(await deliver(events[3]!)).toEqual({ status: 409, code: 'out_of_order' });
    expect(fetches).toEqual([0]);
    expect(rejectedDetail(logs, 'out_of_order')).toEqual([
      'seq 1 to 2 are not available from the API yet',
      'not asked again for 5000 ms (ordering.backfillRetryAfterMs); the last backfill from seq 1 ended: seq 1 to 2 are not available from the API yet',
    ]);
  });

  it('logs the seqs a backfill ran at info, once', async () => {
    const events = await stream([PENDING, PENDING, PENDING, PENDING]);
    const { deliver, logs } = setup({ api: events });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 200, code: undefined });
    expect(
      logs
        .filter((entry) => entry.code === 'stream_backfilled')
        .map(({ level, message, eventId }) => ({ level, message, eventId })),
    ).toEqual([{ level: 'info', message: 'stream gap backfilled: seq 1 to 2', eventId: events[3]!.event_id }]);
  });

  it('logs no backfill when the API showed the delivered event is its stream’s first (nothing was run before it)', async () => {
    const events = await stream([PENDING, PENDING], 1);
    const { deliver, logs, seen, fetches } = setup({ api: events });
    expect(await deliver(events[0]!)).toEqual({ status: 200, code: undefined });
    expect({ seen, fetches }).toEqual({ seen: [1], fetches: [-1] });
    expect(logs.filter((entry) => entry.code === 'stream_backfilled')).toEqual([]);
  });
});

describe('where a stream starts, as the backfill learns it', () => {
  it('a backfill from a cursor never warns about firstSeq, whatever seq it fetches', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const { deliver, logs, seen } = setup({ api: events });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2]);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });

  it('a new stream that starts at 0 as firstSeq says, first delivered at seq 3: backfilled from 0, no warning', async () => {
    const events = await stream([PENDING, PENDING, PENDING, PENDING]);
    const { deliver, logs, seen } = setup({ api: events });
    expect(await deliver(events[3]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });

  it('a new stream whose first event at the API is seq 2 is not taken to start there: 409 out_of_order from seq 0', async () => {
    const events = await stream([PENDING, PENDING, PENDING, PENDING]);
    const { deliver, logs, seen } = setup({ api: events.slice(2) });
    expect(await deliver(events[3]!)).toEqual({ status: 409, code: 'out_of_order' });
    expect(seen).toEqual([]);
    expect(rejectedDetail(logs, 'out_of_order')).toEqual(['seq 0 to 2 are not available from the API yet']);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });
});

describe('a new stream whose first event the API serves purged', () => {
  it('starting at 1 (firstSeq 0), delivered at seq 1 itself: the delivery is genuine, so the stream starts there and it is handled', async () => {
    // The API's copy of the delivered release is purged; the delivery in hand is verified, so nothing is missing.
    const events = await stream([RELEASED, PENDING], 1);
    const { deliver, gaps, logs, seen } = setup({ api: [purged(events[0]!), events[1]!] });
    expect(await deliver(events[0]!)).toEqual({ status: 200, code: undefined });
    expect(await deliver(events[1]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([1, 2]);
    expect(gaps).toEqual([]);
    expect(firstSeqWarnings(logs)).toEqual([
      'streams start at seq 1, not at ordering.firstSeq (0): set firstSeq: 1. Until then each new stream costs an events call to learn where it starts',
    ]);
  });

  it('starting at 1 (firstSeq 0): unfillable at seq 1, where the stream is learnt to start', async () => {
    const events = await stream([RELEASED, PENDING, PENDING], 1);
    const { deliver, gaps, logs, seen } = setup({ api: [purged(events[0]!), events[1]!] });
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(seen).toEqual([]);
    expect(gaps).toEqual([
      expect.objectContaining({
        kind: 'unfillable',
        seq: 3,
        expectedSeq: 0,
        missingSeq: 1,
        missingEventId: events[0]!.event_id,
        detail:
          'the API serves it without its attestation, as it does once a release was purged (410 payload_expired) (attestation_missing)',
      }),
    ]);
    expect(firstSeqWarnings(logs)).toEqual([
      'streams start at seq 1, not at ordering.firstSeq (0): set firstSeq: 1. Until then each new stream costs an events call to learn where it starts',
    ]);
  });

  it('starting at 1 (firstSeq 0), skipped by onUnfillable: the skip is recorded at seq 1 and the stream goes on', async () => {
    const events = await stream([RELEASED, PENDING, PENDING], 1);
    const { deliver, store, seen } = setup({
      api: [purged(events[0]!), events[1]!],
      ordering: { onUnfillable: () => ({ skip: 'purged, checked by ops' }) },
    });
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([2, 3]);
    expect((await store.listSkips!(events[0]!.stream_id)).map(({ seq, reason }) => ({ seq, reason }))).toEqual([
      { seq: 1, reason: 'purged, checked by ops' },
    ]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(3);
  });

  it('starting at 0 as firstSeq says, seq 0 skipped by onUnfillable: the stream goes on from seq 1, no warning', async () => {
    const events = await stream([RELEASED, PENDING, PENDING]);
    const { deliver, logs, seen, store } = setup({
      api: [purged(events[0]!), events[1]!],
      ordering: { onUnfillable: () => ({ skip: 'purged, checked by ops' }) },
    });
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([1, 2]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(2);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });

  it('starting at 0 (firstSeq 1): unfillable at seq 0, where the stream is learnt to start', async () => {
    const events = await stream([RELEASED, PENDING, PENDING, PENDING]);
    const { deliver, gaps, logs } = setup({
      api: [purged(events[0]!), ...events.slice(1)],
      ordering: { firstSeq: 1 },
    });
    expect(await deliver(events[3]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps).toEqual([expect.objectContaining({ kind: 'unfillable', expectedSeq: 1, missingSeq: 0 })]);
    expect(firstSeqWarnings(logs)).toEqual([
      "streams start at seq 0, not at ordering.firstSeq (1): set firstSeq: 0. Until then a seq 1 delivered before its stream's seq 0 ran may be taken as the stream's start",
    ]);
  });

  it('starting at 1 as firstSeq 1 says: unfillable at seq 1, no warning', async () => {
    const events = await stream([RELEASED, PENDING, PENDING], 1);
    const { deliver, gaps, logs } = setup({ api: [purged(events[0]!), events[1]!], ordering: { firstSeq: 1 } });
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps).toEqual([expect.objectContaining({ kind: 'unfillable', missingSeq: 1 })]);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });

  it('a purged release at seq 1 behind a cursor at 0 is unfillable there, and no firstSeq warning is logged', async () => {
    const events = await stream([PENDING, RELEASED, PENDING]);
    const { deliver, gaps, logs } = setup({ api: [events[0]!, purged(events[1]!)] });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps).toEqual([expect.objectContaining({ kind: 'unfillable', expectedSeq: 1, missingSeq: 1 })]);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });
});

describe('a refused event that is not the one the backfill needs is no verdict on that one: 502 backfill_invalid', () => {
  it('the API skips seq 1 and serves seq 2 purged', async () => {
    const events = await stream([PENDING, PENDING, RELEASED, PENDING]);
    const { deliver, gaps, logs } = setup({ api: [purged(events[2]!)] });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(gaps).toEqual([]);
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual([
      'the fetched event for seq 1 was refused: attestation_missing',
    ]);
  });

  it('a new stream whose first event at the API is seq 2, purged', async () => {
    const events = await stream([PENDING, PENDING, RELEASED, PENDING]);
    const { deliver, gaps, logs } = setup({ api: [purged(events[2]!)] });
    expect(await deliver(events[3]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(gaps).toEqual([]);
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual([
      'the fetched event for seq 0 was refused: attestation_missing',
    ]);
    expect(firstSeqWarnings(logs)).toEqual([]);
  });

  it('the delivered event itself, served purged when the API is asked where its new stream starts: handled, the start learnt', async () => {
    const events = await stream([RELEASED], 1);
    const { deliver, gaps, logs, seen } = setup({ api: [purged(events[0]!)] });
    expect(await deliver(events[0]!)).toEqual({ status: 200, code: undefined });
    expect({ gaps, seen }).toEqual({ gaps: [], seen: [1] });
    expect(rejectedDetail(logs, 'backfill_invalid')).toEqual([]);
    expect(firstSeqWarnings(logs)).toHaveLength(1);
  });

  it('the delivered event at seq 2 of a new stream, served purged as the API’s first: not a start, 502 backfill_invalid', async () => {
    // Only seq 0 or 1 can start a stream: the refused copy at 2 is not the seq the backfill needs (0), so it is refused.
    const events = await stream([PENDING, PENDING, RELEASED]);
    const { deliver, seen } = setup({ api: [purged(events[2]!)] });
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(seen).toEqual([]);
  });

  it('a purged release of another stream served for seq 1', async () => {
    const events = await stream([PENDING, PENDING, PENDING]);
    const [, foreign] = await stream([PENDING, RELEASED]);
    const { deliver, gaps } = setup({
      ordering: { fetchEventsAfter: () => [purged(foreign!)] },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(gaps).toEqual([]);
  });
});
