import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { DedupeStore } from '../store/dedupe.js';
import { KybWebhookError } from '../errors.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { GapReport, OrderingOptions, StreamOrdering } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'ordering-secret' } });
  stranger = await createTestSigner({ now: NOW });
});

/** A stream whose seq 1 is an attested release, so backfill has an attestation to verify. */
async function attestedStream(firstSeq: 0 | 1 = 0): Promise<TestEnvelope[]> {
  const events = testStream([
    'kyb.data_request.pending_approval',
    'kyb.data_request.released',
    'kyb.data_request.pending_approval',
    'kyb.data_request.pending_approval',
  ]).map((event) => ({ ...event, seq: event.seq + firstSeq }));
  return Promise.all(events.map((event) => signer.withAttestation(event)));
}

/** Counts every store call, so a test can say what a mode costs. */
function countingStore(inner: StreamCursorStore = createMemoryStore({ now: () => NOW })) {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls, inner };
}

function setup(
  options: { ordering?: Partial<OrderingOptions>; api?: TestEnvelope[]; overrides?: Partial<ReceiverOptions> } = {},
) {
  const api = options.api ?? [];
  const fetches: [string, number][] = [];
  const { store, calls, inner } = countingStore();
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  // The receiver's clock, which the tests move on to pass ordering.backfillRetryAfterMs.
  const clock = { ms: NOW };
  const ordering: StreamOrdering | undefined =
    options.ordering === undefined
      ? undefined
      : streamOrdering({
          mode: 'enforce',
          fetchEventsAfter: async function* (streamId, afterSeq) {
            fetches.push([streamId, afterSeq]);
            // A copy, as parsed from the API's JSON: nothing the receiver holds is shared with the test's list.
            for (const event of api)
              if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
          },
          ...options.ordering,
        });
  const receiver = createReceiver({
    secrets: { '1': 'ordering-secret' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => clock.ms,
    logger: (entry) => logs.push(entry),
    store,
    ...(ordering ? { ordering } : {}),
    ...options.overrides,
  });
  receiver.onAny((event) => {
    seen.push(event.seq);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, api, fetches, store: inner, calls, logs, seen, gaps, clock };
}

describe('ordering off (the default)', () => {
  it('processes a stream out of order exactly as before, without reading or writing any cursor', async () => {
    const [e0, e1, e2] = await attestedStream();
    const { deliver, seen, calls, store } = setup();
    const statuses = [(await deliver(e2!)).status, (await deliver(e0!)).status, (await deliver(e1!)).status];
    expect({ statuses, seen }).toEqual({ statuses: [200, 200, 200], seen: [2, 0, 1] });
    expect(calls.filter((name) => !['claim', 'complete'].includes(name))).toEqual([]);
    expect(await store.getCursor(e0!.stream_id)).toBeNull();
  });

  it("treats mode 'off' like no option", async () => {
    const [e0, e1, e2] = await attestedStream();
    const { deliver, seen, calls } = setup({ ordering: { mode: 'off' } });
    for (const event of [e2!, e0!, e1!]) expect((await deliver(event)).status).toBe(200);
    expect(seen).toEqual([2, 0, 1]);
    expect(calls.filter((name) => !['claim', 'complete'].includes(name))).toEqual([]);
  });
});

describe('ordering enforce', () => {
  it('runs a stream that arrives in order without fetching, and moves the cursor with each event', async () => {
    const events = await attestedStream();
    const { deliver, seen, fetches, store } = setup({ ordering: {} });
    for (const event of events) expect((await deliver(event)).status).toBe(200);
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(fetches).toEqual([]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(3);
  });

  it('costs one store call more than off per in-order event: the cursor read (claim, completeInOrder as the settle)', async () => {
    const [e0] = await attestedStream();
    const { deliver, calls } = setup({ ordering: {} });
    await deliver(e0!);
    expect(calls).toEqual(['getCursor', 'claim', 'completeInOrder']);
  });

  it('backfills a gap through fetchEventsAfter, verified, in order, then runs the event that arrived', async () => {
    const events = await attestedStream();
    const { deliver, seen, fetches, store } = setup({ ordering: {}, api: events });
    await deliver(events[0]!);
    const answer = await deliver(events[3]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(fetches).toEqual([[events[0]!.stream_id, 0]]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(3);
  });

  it('marks backfilled events as fetched from the API, and the delivered one as not', async () => {
    const events = await attestedStream();
    const { receiver, deliver } = setup({ ordering: {}, api: events });
    const authentications: [number, unknown][] = [];
    receiver.onAny((event, context) => {
      authentications.push([event.seq, context.authentication]);
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect(
      authentications.map(([seq, authentication]) => [seq, (authentication as { fetched?: true }).fetched]),
    ).toEqual([
      [0, undefined],
      [1, true],
      [2, undefined],
    ]);
  });

  it('gives a backfilled release its verified answers, like a delivered one', async () => {
    const events = await attestedStream();
    const { receiver, deliver } = setup({ ordering: {}, api: events });
    let answers: unknown;
    receiver.on('kyb.data_request.released', (_event, context) => {
      answers = context.answers;
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect(answers).toBeDefined();
  });

  it('answers a later redelivery of a backfilled event duplicate', async () => {
    const events = await attestedStream();
    const { deliver } = setup({ ordering: {}, api: events });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect((await deliver(events[1]!)).code).toBe('duplicate');
  });

  it.each<[string, (event: TestEnvelope) => Promise<TestEnvelope> | TestEnvelope]>([
    [
      'an attestation signed by an unknown key (a retired key)',
      async (event) => ({ ...event, attestation: await stranger.attest(event) }),
    ],
    ['no attestation on an attested type (a purged release)', (event) => ({ ...event, attestation: undefined })],
  ])(
    'stops at a backfilled event with %s: 502 backfill_unfillable, nothing after it runs, cursor unchanged',
    async (_name, forge) => {
      const events = await attestedStream();
      const api = [events[0]!, await forge(events[1]!), events[2]!];
      const { deliver, seen, store } = setup({ ordering: {}, api });
      await deliver(events[0]!);
      const answer = await deliver(events[3]!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'backfill_unfillable' });
      expect(seen).toEqual([0]);
      expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
    },
  );

  it.each<[string, (event: TestEnvelope) => Promise<TestEnvelope> | TestEnvelope]>([
    [
      'an attestation of another seq (binding)',
      async (event) => ({ ...event, attestation: await signer.attest({ ...event, seq: event.seq + 7 }) }),
    ],
    ['an envelope that is not one', (event) => ({ ...event, event_id: 'not-a-ulid' })],
  ])(
    'stops at a backfilled event with %s: 502 backfill_invalid, nothing after it runs, cursor unchanged',
    async (_name, forge) => {
      const events = await attestedStream();
      const api = [events[0]!, await forge(events[1]!), events[2]!];
      const { deliver, seen, store } = setup({ ordering: {}, api });
      await deliver(events[0]!);
      const answer = await deliver(events[3]!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'backfill_invalid' });
      expect(seen).toEqual([0]);
      expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
    },
  );

  it('refuses a backfilled event of another stream: 502 backfill_invalid', async () => {
    const events = await attestedStream();
    // The fetcher answers the right seq of a different stream (an unattested type, so only the stream check stops it).
    const foreign = { ...events[2]!, seq: 1, stream_id: 'dr_someone_else' };
    const { deliver, seen } = setup({ ordering: { fetchEventsAfter: () => [foreign] } });
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(seen).toEqual([0]);
  });

  it('answers 503 jwks_unavailable, not 502 backfill_invalid, when the keys to check a backfilled event cannot be fetched', async () => {
    const events = await attestedStream();
    // Seq 0 and 2 are unattested (no key needed); the backfilled seq 1 is a release, whose token needs the JWKS.
    const { deliver, seen, logs } = setup({
      ordering: {},
      api: events,
      overrides: {
        attestation: {
          issuer: signer.issuer,
          audience: signer.audience,
          jwksUrl: 'http://127.0.0.1:9/jwks.json',
          jwksTimeoutMs: 500,
        },
      },
    });
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code, seen }).toEqual({
      status: 503,
      code: 'jwks_unavailable',
      seen: [0],
    });
    expect(logs.find((entry) => entry.code === 'jwks_unavailable')?.detail).toMatch(/^the fetched event for seq 1: /);
  });

  it('answers 409 out_of_order when the API does not have the missing events yet, and leaves everything as it was', async () => {
    const events = await attestedStream();
    const { deliver, seen, store, api, clock } = setup({ ordering: {}, api: [] });
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 409, code: 'out_of_order' });
    expect(seen).toEqual([0]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
    // Not marked processed: the service's retry runs it once the API has the gap (and backfillRetryAfterMs passed).
    api.push(...events);
    clock.ms += 5_000;
    expect((await deliver(events[2]!)).status).toBe(200);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('answers 409 out_of_order when the API skips a seq inside the gap', async () => {
    const events = await attestedStream();
    const { deliver, seen, store } = setup({ ordering: {}, api: [events[0]!, events[2]!] });
    await deliver(events[0]!);
    const answer = await deliver(events[3]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 409, code: 'out_of_order' });
    expect(seen).toEqual([0]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
  });

  it('answers 503 backfill_unavailable when fetchEventsAfter throws, without the error text in the answer', async () => {
    const events = await attestedStream();
    const { deliver, seen } = setup({
      ordering: {
        fetchEventsAfter: () => {
          throw new Error('api key kyb_live_secret rejected');
        },
      },
    });
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(JSON.stringify(answer.body)).not.toContain('kyb_live_secret');
    expect(seen).toEqual([0]);
  });

  it('answers 503 backfill_unavailable once backfillTimeoutMs passed when the fetcher never answers, and tells it to stop', async () => {
    const events = await attestedStream();
    let stopped = false;
    let signal: AbortSignal | undefined;
    const { deliver, seen, logs } = setup({
      ordering: {
        backfillTimeoutMs: 50,
        fetchEventsAfter: (_streamId, _afterSeq, given) => {
          signal = given;
          return {
            [Symbol.asyncIterator]: () => ({
              next: () => new Promise<IteratorResult<unknown>>(() => {}),
              return: async () => {
                stopped = true;
                return { done: true, value: undefined };
              },
            }),
          };
        },
      },
    });
    await deliver(events[0]!);
    const started = Date.now();
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stopped).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect(seen).toEqual([0]);
    expect(logs.find((entry) => entry.code === 'backfill_unavailable')?.detail).toContain('backfillTimeoutMs (50 ms)');
  });

  it('answers 200 when the gap closed while the deadline passed (a slow handler of the last missing event), and reads no further', async () => {
    const events = await attestedStream();
    let signal: AbortSignal | undefined;
    const { receiver, deliver, seen } = setup({
      ordering: {
        backfillTimeoutMs: 30,
        fetchEventsAfter: async function* (_streamId, afterSeq, given) {
          signal = given;
          for (const event of events.filter((candidate) => candidate.seq > afterSeq)) yield structuredClone(event);
        },
      },
    });
    receiver.on('kyb.data_request.released', () => new Promise((resolve) => setTimeout(resolve, 80)));
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1, 2]);
    expect(signal?.aborted).toBe(true); // seq 2 and 3 were never needed from the API
  });

  it('keeps what ran before backfillTimeoutMs passed, and the retry goes on from there', async () => {
    const events = await attestedStream();
    let hang = true;
    const { deliver, seen, store } = setup({
      ordering: {
        backfillTimeoutMs: 300,
        fetchEventsAfter: async function* (_streamId, afterSeq) {
          for (const event of events.filter((candidate) => candidate.seq > afterSeq)) {
            if (event.seq === 2 && hang) await new Promise(() => {});
            yield structuredClone(event);
          }
        },
      },
    });
    await deliver(events[0]!);
    const answer = await deliver(events[3]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'backfill_unavailable' });
    expect(seen).toEqual([0, 1]);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(1);
    hang = false;
    expect((await deliver(events[3]!)).status).toBe(200);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('backfills from a fetcher that returns a plain array (a sync iterable)', async () => {
    const events = await attestedStream();
    const { deliver, seen } = setup({
      ordering: {
        fetchEventsAfter: (_streamId, afterSeq) =>
          events.filter((event) => event.seq > afterSeq).map((event) => structuredClone(event)),
      },
    });
    await deliver(events[0]!);
    expect((await deliver(events[3]!)).status).toBe(200);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('answers 500 handler_failed when a backfilled event’s handler fails, keeping the cursor before it', async () => {
    const events = await attestedStream();
    const { receiver, deliver, seen, store, logs } = setup({ ordering: {}, api: events });
    let fail = true;
    receiver.on('kyb.data_request.released', () => {
      if (fail) throw new Error('database down');
    });
    await deliver(events[0]!);
    const answer = await deliver(events[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 500, code: 'handler_failed' });
    // The answer is about the delivered event (seq 2), as onResult hooks and metrics read it; the detail names seq 1.
    expect(answer.event?.event_id).toBe(events[2]!.event_id);
    const rejected = logs.find(
      (entry) => entry.message.startsWith('delivery rejected') && entry.code === 'handler_failed',
    );
    expect({
      eventId: rejected?.eventId,
      backfilled: rejected?.detail?.startsWith(`backfilled seq 1 (event ${events[1]!.event_id})`),
    }).toEqual({ eventId: events[2]!.event_id, backfilled: true });
    expect(await store.getCursor(events[0]!.stream_id)).toBe(0);
    fail = false;
    expect((await deliver(events[2]!)).status).toBe(200);
    expect(await store.getCursor(events[0]!.stream_id)).toBe(2);
    expect(seen.at(-1)).toBe(2);
  });

  describe('late events (at or behind the cursor, not processed before)', () => {
    async function lateSetup() {
      const events = await attestedStream();
      const context = setup({ ordering: {}, api: events });
      await context.deliver(events[0]!);
      // Recovery skipped seq 1 and 2 on purpose.
      await context.store.advanceCursor(events[0]!.stream_id, 2);
      return { ...context, events };
    }

    it('answers 500 late_unhandled without an onGap handler and runs no on/onAny handler', async () => {
      const { deliver, events, seen } = await lateSetup();
      const answer = await deliver(events[1]!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 500, code: 'late_unhandled' });
      expect(seen).toEqual([0]);
    });

    it('hands it to onGap as kind late and answers 200 late once the handler succeeded', async () => {
      const { receiver, deliver, events, seen } = await lateSetup();
      const reports: GapReport[] = [];
      receiver.onGap((report) => {
        reports.push(report);
      });
      const answer = await deliver(events[1]!);
      expect({ status: answer.status, code: answer.code, body: answer.body }).toEqual({
        status: 200,
        code: 'late',
        body: { received: true, code: 'late' },
      });
      expect(reports).toEqual([
        {
          kind: 'late',
          mode: 'enforce',
          streamId: events[1]!.stream_id,
          seq: 1,
          expectedSeq: 3,
          eventId: events[1]!.event_id,
          eventType: 'kyb.data_request.released',
        },
      ]);
      expect(seen).toEqual([0]);
    });

    it('answers its redelivery duplicate once onGap took it', async () => {
      const { receiver, deliver, events } = await lateSetup();
      receiver.onGap(() => {});
      await deliver(events[1]!);
      expect((await deliver(events[1]!)).code).toBe('duplicate');
    });

    it('answers 500 late_unhandled when an onGap handler fails, and the retry can still succeed', async () => {
      const { receiver, deliver, events } = await lateSetup();
      let fail = true;
      receiver.onGap(async () => {
        if (fail) throw new Error('queue full');
      });
      expect((await deliver(events[1]!)).code).toBe('late_unhandled');
      fail = false;
      expect((await deliver(events[1]!)).code).toBe('late');
    });

    it('answers 503 handler_timeout when an onGap handler outlives handlerTimeoutMs, and records its late success', async () => {
      const events = await attestedStream();
      const { receiver, deliver, store } = setup({ ordering: {}, overrides: { handlerTimeoutMs: 20 } });
      await deliver(events[0]!);
      await store.advanceCursor(events[0]!.stream_id, 2);
      let finish!: () => void;
      const hook = new Promise<void>((resolve) => (finish = resolve));
      receiver.onGap(() => hook);
      const answer = await deliver(events[1]!);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'handler_timeout' });
      finish();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await deliver(events[1]!)).code).toBe('duplicate');
    });

    it('answers a completed event behind the cursor duplicate, without onGap', async () => {
      const { receiver, deliver, events } = await lateSetup();
      const reports: GapReport[] = [];
      receiver.onGap((report) => {
        reports.push(report);
      });
      expect((await deliver(events[0]!)).code).toBe('duplicate');
      expect(reports).toEqual([]);
    });
  });

  describe('a genuine token re-wrapped under another type, delivered first (the type is not signed)', () => {
    async function rewrapSetup(overrides: Partial<ReceiverOptions>) {
      const stream = testStream(['kyb.business.wallet_address_changed', 'kyb.business.wallet_address_changed']);
      const [first, second] = await Promise.all(stream.map((event) => signer.withAttestation(event)));
      return {
        first: first!,
        second: second!,
        rewrapped: { ...first!, event: 'kyb.business.risk_flagged', data: {} },
        ...setup({ ordering: {}, overrides }),
      };
    }

    it('with secrets the HMAC vouches for the type, so the genuine event behind the cursor is late like any other', async () => {
      const { first, rewrapped, deliver, seen } = await rewrapSetup({});
      expect((await deliver(rewrapped)).status).toBe(200);
      const genuine = await deliver(first);
      expect({ status: genuine.status, code: genuine.code }).toEqual({ status: 500, code: 'late_unhandled' });
      expect(seen).toEqual([0]);
    });

    it('without secrets: the genuine event still runs in its turn, and the stream goes on', async () => {
      const { first, second, rewrapped, receiver, deliver, seen } = await rewrapSetup({ secrets: undefined });
      const types: string[] = [];
      receiver.onAny((event) => {
        types.push(event.event);
      });
      expect((await deliver(rewrapped)).status).toBe(200);
      const genuine = await deliver(first);
      expect({ status: genuine.status, code: genuine.code }).toEqual({ status: 200, code: undefined });
      expect((await deliver(first)).code).toBe('duplicate');
      expect((await deliver(second)).code).toBeUndefined();
      expect(seen).toEqual([0, 0, 1]);
      expect(types).toEqual([
        'kyb.business.risk_flagged',
        'kyb.business.wallet_address_changed',
        'kyb.business.wallet_address_changed',
      ]);
    });
  });

  describe('firstSeq', () => {
    it('with the default 0, a new stream whose first delivery is seq 1 is backfilled from afterSeq -1', async () => {
      const events = await attestedStream(0);
      const { deliver, seen, fetches } = setup({ ordering: {}, api: events });
      expect((await deliver(events[1]!)).status).toBe(200);
      expect({ seen, fetches }).toEqual({ seen: [0, 1], fetches: [[events[0]!.stream_id, -1]] });
    });

    it('with 1, a new stream starts at seq 1 without fetching', async () => {
      const events = await attestedStream(1);
      const { deliver, seen, fetches, store } = setup({ ordering: { firstSeq: 1 }, api: events });
      for (const event of events) expect((await deliver(event)).status).toBe(200);
      expect({ seen, fetches }).toEqual({ seen: [1, 2, 3, 4], fetches: [] });
      expect(await store.getCursor(events[0]!.stream_id)).toBe(4);
    });

    it('with 1, a new stream whose first delivery is seq 3 is read from its beginning (afterSeq -1)', async () => {
      const events = await attestedStream(1);
      const { deliver, seen, fetches, logs } = setup({ ordering: { firstSeq: 1 }, api: events });
      expect((await deliver(events[2]!)).status).toBe(200);
      expect({ seen, fetches }).toEqual({ seen: [1, 2, 3], fetches: [[events[0]!.stream_id, -1]] });
      expect(logs.filter((entry) => entry.message.includes('ordering.firstSeq'))).toEqual([]);
    });

    const firstSeqWarnings = (logs: LogEntry[]) =>
      logs
        .filter((entry) => entry.message.includes('not at ordering.firstSeq'))
        .map((entry) => `${entry.level}: ${entry.message}`);

    it('a wrong guess of 0 (streams start at 1): the first event runs once the API shows where the stream starts', async () => {
      const [events, other] = [await attestedStream(1), await attestedStream(1)];
      const { deliver, seen, fetches, logs, store } = setup({ ordering: {}, api: [...events, ...other] });
      for (const event of events) expect((await deliver(event)).code).toBeUndefined();
      // One events call, for the new stream's first event; its next events follow the cursor.
      expect({ seen, fetches }).toEqual({ seen: [1, 2, 3, 4], fetches: [[events[0]!.stream_id, -1]] });
      expect(await store.getCursor(events[0]!.stream_id)).toBe(4);
      // A second stream that starts at 1 costs its events call too, and the warning is not repeated.
      expect((await deliver(other[0]!)).code).toBeUndefined();
      expect(firstSeqWarnings(logs)).toEqual([
        'warn: streams start at seq 1, not at ordering.firstSeq (0): set firstSeq: 1. Until then each new stream costs an events call to learn where it starts',
      ]);
    });

    it('a wrong guess of 1 (streams start at 0): seq 0 runs in its turn, never as a late event', async () => {
      const events = await attestedStream(0);
      const { deliver, seen, fetches, logs, gaps } = setup({ ordering: { firstSeq: 1 }, api: events });
      for (const event of events) expect((await deliver(event)).code).toBeUndefined();
      expect({ seen, fetches, gaps }).toEqual({ seen: [0, 1, 2, 3], fetches: [], gaps: [] });
      expect(firstSeqWarnings(logs)).toEqual([
        "warn: streams start at seq 0, not at ordering.firstSeq (1): set firstSeq: 0. Until then a seq 1 delivered before its stream's seq 0 ran may be taken as the stream's start",
      ]);
    });

    it('a wrong guess of 1, once a stream was seen to start at 0: a new stream’s seq 1 asks the API first, so its seq 0 is not skipped', async () => {
      const [a, b] = [await attestedStream(0), await attestedStream(0)];
      expect(a[0]!.stream_id).not.toBe(b[0]!.stream_id);
      const { deliver, seen, fetches } = setup({ ordering: { firstSeq: 1 }, api: [...a, ...b] });
      expect((await deliver(a[0]!)).status).toBe(200);
      // Stream b's seq 0 was given up on (or runs in another process): its seq 1 arrives first.
      expect((await deliver(b[1]!)).status).toBe(200);
      expect({ seen, fetches }).toEqual({ seen: [0, 0, 1], fetches: [[b[0]!.stream_id, -1]] });
    });

    it('a wrong guess of 1 (streams start at 0), first delivery seq 2: seq 0 and 1 are backfilled, none skipped', async () => {
      const events = await attestedStream(0);
      const { deliver, seen, fetches } = setup({ ordering: { firstSeq: 1 }, api: events });
      expect((await deliver(events[2]!)).status).toBe(200);
      expect({ seen, fetches }).toEqual({ seen: [0, 1, 2], fetches: [[events[0]!.stream_id, -1]] });
    });
  });
});

describe('ordering detect', () => {
  it('processes a gap as it comes and reports it to onGap and the logger', async () => {
    const events = await attestedStream();
    const { receiver, deliver, seen, logs } = setup({ ordering: { mode: 'detect', fetchEventsAfter: undefined } });
    const reports: GapReport[] = [];
    receiver.onGap((report) => {
      reports.push(report);
    });
    await deliver(events[0]!);
    expect((await deliver(events[2]!)).status).toBe(200);
    expect(seen).toEqual([0, 2]);
    expect(reports.map(({ kind, seq, expectedSeq, mode }) => ({ kind, seq, expectedSeq, mode }))).toEqual([
      { kind: 'gap', seq: 2, expectedSeq: 1, mode: 'detect' },
    ]);
    expect(logs.filter((entry) => entry.code === 'stream_gap').map((entry) => entry.level)).toEqual(['warn']);
  });

  it('processes a late event as it comes and reports it as late', async () => {
    const events = await attestedStream();
    const { receiver, deliver, seen } = setup({ ordering: { mode: 'detect', fetchEventsAfter: undefined } });
    const reports: GapReport[] = [];
    receiver.onGap((report) => {
      reports.push(report);
    });
    await deliver(events[0]!);
    await deliver(events[2]!);
    expect((await deliver(events[1]!)).status).toBe(200);
    expect(seen).toEqual([0, 2, 1]);
    expect(reports.map(({ kind, seq, expectedSeq }) => ({ kind, seq, expectedSeq }))).toEqual([
      { kind: 'gap', seq: 2, expectedSeq: 1 },
      { kind: 'late', seq: 1, expectedSeq: 3 },
    ]);
  });

  it('answers the same even when an onGap handler throws', async () => {
    const events = await attestedStream();
    const { receiver, deliver } = setup({ ordering: { mode: 'detect', fetchEventsAfter: undefined } });
    receiver.onGap(() => {
      throw new Error('metrics down');
    });
    await deliver(events[0]!);
    expect((await deliver(events[2]!)).status).toBe(200);
  });

  it('reports nothing for a stream in order', async () => {
    const events = await attestedStream();
    const { receiver, deliver, seen } = setup({ ordering: { mode: 'detect', fetchEventsAfter: undefined } });
    const reports: GapReport[] = [];
    receiver.onGap((report) => {
      reports.push(report);
    });
    for (const event of events) await deliver(event);
    expect({ seen, reports }).toEqual({ seen: [0, 1, 2, 3], reports: [] });
  });
});

describe('ordering options', () => {
  function configError(options: Partial<ReceiverOptions>): string {
    try {
      createReceiver({ secrets: { '1': 'ordering-secret' }, ...options });
    } catch (error) {
      if (error instanceof KybWebhookError && error.code === 'config_invalid') return error.message;
      throw error;
    }
    throw new Error('createReceiver accepted the options');
  }

  it("refuses 'enforce' without fetchEventsAfter, naming the client one-liner", () => {
    expect(configError({ ordering: streamOrdering({ mode: 'enforce' }) })).toMatch(
      /ordering\.fetchEventsAfter.*client\.events\(s, \{ afterSeq: a, signal \}\)/,
    );
  });

  it.each([0, -1, Number.NaN, '30s', 2 ** 31])('refuses backfillTimeoutMs %s, naming the option', (value) => {
    expect(
      configError({
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [], backfillTimeoutMs: value as number }),
      }),
    ).toMatch(/ordering\.backfillTimeoutMs/);
  });

  it('refuses ordering with a store that keeps no stream cursors, saying what to use', () => {
    const store: DedupeStore = {
      claim: async () => ({ status: 'completed' }),
      complete: async () => true,
      release: async () => true,
    };
    expect(configError({ store, ordering: streamOrdering({ mode: 'detect' }) })).toMatch(
      /`store` keeps no stream cursors.*createRedisStore/,
    );
  });

  it('accepts a store without cursors when ordering is off', () => {
    const store: DedupeStore = {
      claim: async () => ({ status: 'completed' }),
      complete: async () => true,
      release: async () => true,
    };
    expect(() => createReceiver({ secrets: { '1': 'x' }, store, ordering: { mode: 'off' } })).not.toThrow();
  });

  it.each([
    [{ mode: 'strict' }, /ordering\.mode` must be 'off', 'detect' or 'enforce'/],
    [{ mode: 'detect', firstSeq: 2 }, /ordering\.firstSeq` must be 0 or 1/],
    [{}, /ordering\.mode/],
    [{ mode: 'detect', startSeq: 1 }, /did you mean.*firstSeq|firstSeq/],
  ])('refuses ordering %j', (ordering, message) => {
    expect(configError({ ordering: ordering as never })).toMatch(message);
  });
});
