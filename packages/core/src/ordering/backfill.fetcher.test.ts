// How a backfill treats its fetcher (backfill.ts, backfill-guard.ts): which thrown errors say "gone for good" and how
// they are described, a fetcher that is slow, hangs or never ends, the event loop's turns while it reads, and the
// short memory of gaps the API could not fill.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { FetchEventsAfter, GapReport, OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 25, 11, 0, 0);
const SECRET = 'fetcher-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** seq 0 pending, seq 1 an attested release (which the API may serve purged), seq 2 and 3 pending. */
async function attestedStream(): Promise<TestEnvelope[]> {
  const events = testStream([
    'kyb.data_request.pending_approval',
    'kyb.data_request.released',
    'kyb.data_request.pending_approval',
    'kyb.data_request.pending_approval',
  ]);
  return Promise.all(events.map((event) => signer.withAttestation(event)));
}

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

const rejectedDetail = (logs: LogEntry[], code: string) =>
  logs.filter((entry) => entry.message === `delivery rejected: ${code}`).map((entry) => entry.detail);

/** A fetcher that throws `error` when asked, as a client call that failed does. */
const throwing =
  (error: unknown): FetchEventsAfter =>
  () => {
    throw error;
  };

describe('a fetcher error that says the event is gone for good', () => {
  it.each([['payload_expired'], ['request_not_found'], ['not_found'], ['event_not_found'], ['gone']])(
    'code %s alone: 502 backfill_unfillable, reason gone',
    async (code) => {
      const events = await attestedStream();
      const { deliver, gaps } = setup({
        ordering: { fetchEventsAfter: throwing(Object.assign(new Error('x'), { code })) },
      });
      await deliver(events[0]!);
      expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
      expect(gaps).toEqual([
        expect.objectContaining({
          kind: 'unfillable',
          reason: 'gone',
          missingSeq: 1,
          detail: `fetchEventsAfter says it is gone (code ${code})`,
        }),
      ]);
    },
  );

  it.each([[404], [410]])(
    'HTTP %s alone, without a code: 502 backfill_unfillable, described by its status',
    async (status) => {
      const events = await attestedStream();
      const { deliver, gaps } = setup({
        ordering: { fetchEventsAfter: throwing(Object.assign(new Error('x'), { status })) },
      });
      await deliver(events[0]!);
      expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
      expect(gaps).toEqual([
        expect.objectContaining({ reason: 'gone', detail: `fetchEventsAfter says it is gone (HTTP ${status})` }),
      ]);
    },
  );

  it('a long code is cut to 64 characters in the description', async () => {
    const events = await attestedStream();
    const code = 'c'.repeat(100);
    const { deliver, gaps } = setup({
      ordering: { fetchEventsAfter: throwing(Object.assign(new Error('x'), { status: 410, code })) },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(gaps[0]?.detail).toBe(`fetchEventsAfter says it is gone (HTTP 410, code ${'c'.repeat(64)})`);
  });

  it('a fetcher that throws at once, whose gone seq onUnfillable skips: the backfill asks again after it and goes on', async () => {
    const events = await attestedStream();
    const fetches: number[] = [];
    const { deliver, seen } = setup({
      ordering: {
        fetchEventsAfter: (_streamId, afterSeq) => {
          fetches.push(afterSeq);
          if (afterSeq < 1) throw Object.assign(new Error('gone'), { status: 410 });
          return events.filter((event) => event.seq > afterSeq).map((event) => structuredClone(event));
        },
        onUnfillable: () => ({ skip: 'checked by hand' }),
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 200, code: undefined });
    expect({ seen, fetches }).toEqual({ seen: [0, 2, 3], fetches: [0, 1] });
  });
});

describe('a fetcher error that is no verdict: 503 backfill_unavailable, retried', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'gone'],
    ['a number', 404],
    ['an error with another status and code', Object.assign(new Error('x'), { status: 500, code: 'internal' })],
  ])('%s thrown', async (_name, error) => {
    const events = await attestedStream();
    const { deliver, gaps, logs } = setup({ ordering: { fetchEventsAfter: throwing(error) } });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(gaps).toEqual([]);
    expect(rejectedDetail(logs, 'backfill_unavailable')).toEqual(['fetchEventsAfter failed']);
  });
});

describe('a gap the API could not fill is not asked about again within backfillRetryAfterMs', () => {
  it.each<[string, () => Promise<Partial<Parameters<typeof setup>[0]>>, string]>([
    [
      'the fetcher threw',
      async () => ({ ordering: { fetchEventsAfter: throwing(new Error('down')) } }),
      'backfill_unavailable',
    ],
    [
      'the API served an event of another stream',
      async () => {
        const [, foreign] = testStream(2);
        return { ordering: { fetchEventsAfter: () => [foreign!] } };
      },
      'backfill_invalid',
    ],
    [
      'the API served the missing release purged',
      async () => {
        const events = await attestedStream();
        return { streamOf: events, api: [events[0]!, { ...events[1]!, attestation: undefined }] };
      },
      'backfill_unfillable',
    ],
  ])('%s: the same answer, one events call', async (_name, make, code) => {
    const made = (await make()) as { streamOf?: TestEnvelope[] } & Parameters<typeof setup>[0];
    const events = made.streamOf ?? (await attestedStream());
    let calls = 0;
    const inner = made.ordering?.fetchEventsAfter;
    const { deliver } = setup({
      ...made,
      ordering: {
        fetchEventsAfter: (streamId, afterSeq, signal) => {
          calls++;
          if (inner) return inner(streamId, afterSeq, signal);
          return (made.api ?? []).filter((event) => event.seq > afterSeq).map((event) => structuredClone(event));
        },
      },
    });
    await deliver(events[0]!);
    const first = await deliver(events[2]!);
    const second = await deliver(events[2]!);
    expect({ first: first.code, second: second.code, calls }).toEqual({ first: code, second: code, calls: 1 });
  });

  it('the keys to check the fetched release could not be fetched: 503 jwks_unavailable again, one events call', async () => {
    const events = await attestedStream();
    const down = (async () => new Response('down', { status: 503 })) as typeof fetch;
    const { deliver, fetches, logs } = setup({
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
    expect(await deliver(events[2]!)).toEqual({ status: 503, code: 'jwks_unavailable' });
    expect(await deliver(events[2]!)).toEqual({ status: 503, code: 'jwks_unavailable' });
    expect(fetches).toEqual([0]);
    const [first] = rejectedDetail(logs, 'jwks_unavailable');
    expect(first).toMatch(/^the fetched event for seq 1: /);
    expect(first).not.toContain('The attestation keys could not be fetched');
  });
});

describe('a slow or endless fetcher', () => {
  it('waits for a fetcher that serves each event after a few ms, well within backfillTimeoutMs', async () => {
    const events = await attestedStream();
    const { deliver, seen } = setup({
      ordering: {
        backfillTimeoutMs: 5_000,
        fetchEventsAfter: async function* (_streamId, afterSeq) {
          for (const event of events.filter((candidate) => candidate.seq > afterSeq)) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            yield structuredClone(event);
          }
        },
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('stops before the next event once backfillTimeoutMs passed during a slow handler: 503, what ran stays recorded', async () => {
    const events = await attestedStream();
    const { receiver, deliver, seen, store, logs } = setup({ api: events, ordering: { backfillTimeoutMs: 30 } });
    receiver.on('kyb.data_request.released', () => new Promise((resolve) => setTimeout(resolve, 80)));
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(seen).toEqual([0, 1]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(1);
    expect(rejectedDetail(logs, 'backfill_unavailable')).toEqual([
      'the backfill of seq 2 to 2 did not finish within backfillTimeoutMs (30 ms); the retry goes on from seq 2',
    ]);
  });

  it('a fetcher whose events ran out is not told to stop; one left early is', async () => {
    const events = await attestedStream();
    const signals: AbortSignal[] = [];
    const { deliver } = setup({
      ordering: {
        backfillRetryAfterMs: 0,
        fetchEventsAfter: (_streamId, afterSeq, signal) => {
          signals.push(signal);
          // The first call has nothing; the second serves the whole stream, more than the gap needs.
          return signals.length === 1 ? [] : events.filter((event) => event.seq > afterSeq);
        },
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 409, code: 'out_of_order' });
    expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
    expect(signals.map((signal) => signal.aborted)).toEqual([false, true]);
  });

  it('a fetcher whose return() rejects when it is left early: the rejection is handled, the answer unchanged', async () => {
    const events = await attestedStream();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { deliver } = setup({
        ordering: {
          fetchEventsAfter: (_streamId, afterSeq) => {
            const queue = events.filter((event) => event.seq > afterSeq);
            return {
              [Symbol.asyncIterator]: () => ({
                next: async () => ({ done: false, value: structuredClone(queue.shift()!) }),
                return: () => Promise.reject(new Error('connection already closed')),
              }),
            };
          },
        },
      });
      await deliver(events[0]!);
      expect(await deliver(events[2]!)).toEqual({ status: 200, code: undefined });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('the event loop gets its turns while a backfill reads', () => {
  it('a fetcher whose events are all ready: a timer runs within the first 64 events', async () => {
    const events = await attestedStream();
    let served = 0;
    let servedAtTimer: number | undefined;
    const { deliver } = setup({
      ordering: {
        fetchEventsAfter: function* () {
          setTimeout(() => (servedAtTimer = served), 0);
          // Seq 0 again and again: nothing to verify or run, so only the loop's own yields let the timer in.
          for (;;) {
            served++;
            yield structuredClone(events[0]!);
          }
        },
      },
    });
    await deliver(events[0]!);
    expect(await deliver(events[2]!)).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(servedAtTimer).toBeLessThanOrEqual(64);
  });

  it('slow events (a handler busy for ms): a timer runs after about 10 ms, before the backfill ends', async () => {
    const events = testStream(21);
    let ranAtTimer: number | undefined;
    const { receiver, deliver, seen } = setup({
      ordering: {
        fetchEventsAfter: async function* (_streamId, afterSeq) {
          setTimeout(() => (ranAtTimer = seen.length), 0);
          for (const event of events.filter((candidate) => candidate.seq > afterSeq)) yield structuredClone(event);
        },
      },
    });
    receiver.onAny(() => {
      const until = Date.now() + 3;
      while (Date.now() < until) {
        // a synchronous handler that takes its time, as a CPU-bound one does
      }
    });
    await deliver(events[0]!);
    expect(await deliver(events[20]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toHaveLength(21);
    expect(ranAtTimer).toBeLessThan(21);
  });
});
