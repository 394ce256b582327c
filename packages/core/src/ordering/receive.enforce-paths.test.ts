// The ways through receiveEnforced (receive.ts): the cursor read and the hint it gives the store, events at, behind
// and ahead of the cursor, deliveries that wait for another's backfill, events at the cursor's seq on a receiver
// without secrets, and what the answers and the log say on each way.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import { MAX_STREAM_ID_LENGTH, type StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 26, 7, 0, 0);
const SECRET = 'enforce-paths-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

type Overrides = Partial<Record<keyof StreamCursorStore, (...args: never[]) => unknown>>;

/** A memory store, some of whose methods a test replaces. */
function storeWith(overrides: Overrides, inner: StreamCursorStore): StreamCursorStore {
  return new Proxy(inner, {
    get(target, name, receiver) {
      const replaced = (overrides as Record<PropertyKey, unknown>)[name];
      if (typeof replaced === 'function') return replaced;
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function setup(
  options: {
    ordering?: Partial<OrderingOptions>;
    api?: TestEnvelope[];
    overrides?: Partial<ReceiverOptions>;
    store?: Overrides;
  } = {},
) {
  const api = options.api ?? [];
  const memory = createMemoryStore({ now: () => NOW });
  const logs: LogEntry[] = [];
  const seen: number[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: (entry) => logs.push(entry),
    store: storeWith(options.store ?? {}, memory),
    ordering: streamOrdering({
      mode: 'enforce',
      fetchEventsAfter: async function* (streamId, afterSeq) {
        for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
      },
      ...options.ordering,
    }),
    ...options.overrides,
  });
  receiver.onAny((event) => {
    seen.push(event.seq);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    const answer = await receiver.receive({ method: 'POST', headers, body });
    return { status: answer.status, code: answer.code };
  };
  return { receiver, deliver, memory, logs, seen };
}

/** Resolves once `condition` holds, polling each millisecond: for a step of another delivery to be reached. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

const rejectedDetail = (logs: LogEntry[], code: string) =>
  logs.filter((entry) => entry.message === `delivery rejected: ${code}`).map((entry) => entry.detail);

describe('the cursor read', () => {
  it.each<[0 | 1, number, boolean]>([
    [0, 0, true],
    [0, 1, false],
    [1, 0, true],
    [1, 1, true],
    [1, 2, false],
  ])(
    'with firstSeq %s, a new stream’s seq %s tells the store whether it may be the first event (firstEvent: %s)',
    async (firstSeq, seq, firstEvent) => {
      const events = testStream(3);
      const hints: unknown[] = [];
      const { deliver, memory } = setup({
        api: events,
        ordering: { firstSeq },
        store: {
          getCursor: (streamId: string, hint: unknown) => {
            hints.push(hint);
            return memory.getCursor(streamId);
          },
        },
      });
      await deliver(events[seq]!);
      expect(hints[0]).toEqual({ firstEvent });
    },
  );

  it('a cursor read that does not settle within storeTimeoutMs: 503 store_unavailable, naming getCursor', async () => {
    const [event] = testStream(1);
    const { deliver, logs } = setup({
      overrides: { storeTimeoutMs: 20 },
      store: { getCursor: () => new Promise(() => {}) },
    });
    expect(await deliver(event!)).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual([
      "the store's getCursor() did not settle within storeTimeoutMs (20 ms)",
    ]);
  });

  it('a stream_id too long for a cursor store: 400 envelope_invalid, the log says why', async () => {
    const [event] = testStream(1, { stream_id: 's'.repeat(MAX_STREAM_ID_LENGTH + 1) });
    const { deliver, logs } = setup();
    expect(await deliver(event!)).toEqual({ status: 400, code: 'envelope_invalid' });
    expect(rejectedDetail(logs, 'envelope_invalid')).toEqual([
      `stream_id is longer than the ${MAX_STREAM_ID_LENGTH} characters a cursor store keeps`,
    ]);
  });
});

describe('an event in its turn', () => {
  it('runs while a gap after it is remembered as not fillable yet', async () => {
    const events = testStream(4);
    const { deliver, seen } = setup({ api: [] });
    await deliver(events[0]!);
    expect(await deliver(events[3]!)).toEqual({ status: 409, code: 'out_of_order' });
    expect(await deliver(events[1]!)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1]);
  });
});

describe('an event behind the cursor (late)', () => {
  it('with firstSeq 1, a seq 0 behind a cursor is late, not a stream’s start: nothing runs', async () => {
    const events = testStream(3);
    const { deliver, memory, seen, logs } = setup({ ordering: { firstSeq: 1 } });
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[0]!)).toEqual({ status: 500, code: 'late_unhandled' });
    expect(seen).toEqual([]);
    expect(rejectedDetail(logs, 'late_unhandled')).toEqual(['no onGap handler is registered']);
  });

  it('an onGap handler that fails: 500 late_unhandled, the log says so', async () => {
    const events = testStream(3);
    const { receiver, deliver, memory, logs } = setup();
    receiver.onGap(() => {
      throw new Error('queue full');
    });
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 500, code: 'late_unhandled' });
    expect(rejectedDetail(logs, 'late_unhandled')).toEqual(['an onGap handler failed']);
  });

  it('an onGap handler past handlerTimeoutMs: 503 handler_timeout, the log says so', async () => {
    const events = testStream(3);
    const { receiver, deliver, memory, logs } = setup({ overrides: { handlerTimeoutMs: 20 } });
    receiver.onGap(() => new Promise((resolve) => setTimeout(resolve, 60)));
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 503, code: 'handler_timeout' });
    expect(rejectedDetail(logs, 'handler_timeout')).toEqual([
      'an onGap handler did not finish within handlerTimeoutMs',
    ]);
  });

  it('an onGap handler past handlerTimeoutMs keeps its claim: extended while it runs, no more once it settled', async () => {
    const events = testStream(3);
    const extended: unknown[][] = [];
    const { receiver, deliver, memory } = setup({
      overrides: { handlerTimeoutMs: 20, storeTimeoutMs: 5, leaseMs: 60 },
      store: { extend: (...args: never[]) => (extended.push(args), true) },
    });
    let finish!: () => void;
    receiver.onGap(() => new Promise<void>((resolve) => (finish = resolve)));
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 503, code: 'handler_timeout' });
    await new Promise((resolve) => setTimeout(resolve, 100)); // every 20 ms: at once, then about 5 more
    expect(extended.length).toBeGreaterThanOrEqual(2);
    expect(extended[0]).toEqual([expect.any(String), expect.any(String), { leaseMs: 60 }]);
    const whenFinished = extended.length;
    finish();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(extended.length).toBe(whenFinished);
  });

  it('taken by onGap whose record then fails: 200 late, and the log names the onGap handlers', async () => {
    const events = testStream(3);
    const { receiver, deliver, memory, logs } = setup({
      store: {
        complete: () => {
          throw new Error('store down');
        },
      },
    });
    receiver.onGap(() => {});
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 200, code: 'late' });
    expect(logs.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      'complete failed after the onGap handlers succeeded: complete failed; trying again in the background',
    ]);
  });
});

describe('a late event exactly retainMs old, or older, with no onGap handler', () => {
  function expired(ageMs: number) {
    const events = testStream(3).map((event) => ({ ...event, timestamp: (NOW - ageMs) / 1000 }));
    return { events, ...setup({ overrides: { retainMs: 60_000 } }) };
  }

  it('exactly retainMs old: its record may still be kept, so it is not taken for an expired one: 500 late_unhandled', async () => {
    const { events, deliver, memory } = expired(60_000);
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 500, code: 'late_unhandled' });
  });

  it('older: 200 duplicate, nothing run, and a warning that says why and what to do', async () => {
    const { events, deliver, memory, logs, seen } = expired(61_000);
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 200, code: 'duplicate' });
    expect(seen).toEqual([]);
    expect(
      logs
        .filter((entry) => entry.code === 'stream_late')
        .map(({ level, message, eventId, eventType }) => ({ level, message, eventId, eventType })),
    ).toEqual([
      {
        level: 'warn',
        message:
          'late event: seq 1 is behind the stream cursor, has no record and is older than retainMs, so it was most likely processed before and its record expired; answered duplicate without running it. Register onGap to decide such events yourself',
        eventId: events[1]!.event_id,
        eventType: events[1]!.event,
      },
    ]);
  });
});

describe('deliveries of one stream that keep overtaking each other', () => {
  it('a delivery waits for another’s backfill once; finding a second one running, it is answered 409 in_progress', async () => {
    const events = testStream(4);
    let openFirst!: () => void;
    let openSecond!: () => void;
    const first = new Promise<void>((resolve) => (openFirst = resolve));
    const second = new Promise<void>((resolve) => (openSecond = resolve));
    let calls = 0;
    let cursorReads = 0;
    const { receiver, deliver, logs, memory } = setup({
      store: {
        getCursor: (streamId: string) => {
          cursorReads++;
          return memory.getCursor(streamId);
        },
      },
      ordering: {
        backfillRetryAfterMs: 0,
        fetchEventsAfter: async function* (_streamId, afterSeq) {
          calls++;
          if (calls === 1) {
            await first;
            throw new Error('connection reset'); // the first backfill fails, and is not remembered
          }
          await second;
          for (const event of events) if (event.seq > afterSeq) yield structuredClone(event);
        },
      },
    });
    await deliver(events[0]!);
    const signed = await Promise.all([events[3]!, events[2]!, events[3]!].map((event) => signer.sign(event)));
    const receive = (index: number) => receiver.receive({ method: 'POST', ...signed[index]! });
    const backfilling = receive(0);
    await until(() => calls === 1);
    // Both wait for the first backfill; when it fails, one of them starts the next and the other finds it running.
    const waiting = [receive(1), receive(2)];
    await until(() => cursorReads === 4); // seq 0's, the backfilling one's, and theirs
    openFirst();
    setTimeout(openSecond, 100);
    expect((await backfilling).code).toBe('backfill_unavailable');
    const answers = await Promise.all(waiting);
    expect(answers.map((answer) => `${answer.status} ${answer.code}`).sort()).toEqual([
      '200 undefined',
      '409 in_progress',
    ]);
    expect(rejectedDetail(logs, 'in_progress')).toEqual(['another delivery of this stream is backfilling it']);
  });
});

describe('a receiver without secrets (the type of an event is not signed)', () => {
  function unsigned(options: Parameters<typeof setup>[0] = {}) {
    return setup({ ...options, overrides: { secrets: undefined, ...options.overrides } });
  }
  const wallets = async (count: number) =>
    Promise.all(
      testStream(Array.from({ length: count }, () => 'kyb.business.wallet_address_changed' as const)).map((event) =>
        signer.withAttestation(event),
      ),
    );

  it('runs a stream in order in its turn, moving the cursor', async () => {
    const events = await wallets(2);
    const { deliver, memory, seen } = unsigned();
    for (const event of events) expect(await deliver(event)).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([0, 1]);
    expect(await memory.getCursor(events[0]!.stream_id)).toBe(1);
  });

  it('an event behind the cursor, not at it, is late as with secrets', async () => {
    const events = await wallets(3);
    const { deliver, memory, seen } = unsigned();
    await memory.advanceCursor(events[0]!.stream_id, 2);
    expect(await deliver(events[1]!)).toEqual({ status: 500, code: 'late_unhandled' });
    expect(seen).toEqual([]);
  });

  it('a release at the cursor’s seq (its claims fix its type) is late as with secrets', async () => {
    const events = await Promise.all(
      testStream(['kyb.data_request.released', 'kyb.data_request.released']).map((event) =>
        signer.withAttestation(event),
      ),
    );
    const { deliver, memory, seen } = unsigned();
    await memory.advanceCursor(events[0]!.stream_id, 1);
    expect(await deliver(events[1]!)).toEqual({ status: 500, code: 'late_unhandled' });
    expect(seen).toEqual([]);
  });

  describe('the genuine event at the cursor’s seq, after a re-wrapped copy took it', () => {
    async function rewrapped(options: Parameters<typeof setup>[0] = {}) {
      const [genuine] = await wallets(1);
      const rig = unsigned(options);
      expect(await rig.deliver({ ...genuine!, event: 'kyb.business.risk_flagged', data: {} })).toEqual({
        status: 200,
        code: undefined,
      });
      return { genuine: genuine!, ...rig };
    }

    it('whose handler fails: 500 handler_failed, and its retry runs it', async () => {
      const { genuine, receiver, deliver, seen } = await rewrapped();
      let fail = true;
      receiver.on('kyb.business.wallet_address_changed', () => {
        if (fail) throw new Error('database down');
      });
      expect(await deliver(genuine)).toEqual({ status: 500, code: 'handler_failed' });
      fail = false;
      expect(await deliver(genuine)).toEqual({ status: 200, code: undefined });
      expect(seen).toEqual([0, 0, 0]);
    });

    it('whose record fails: 200, and the log names the handlers that succeeded', async () => {
      // The re-wrapped copy was recorded in order (completeInOrder); complete() records only the genuine one.
      const { genuine, deliver, logs } = await rewrapped({
        store: {
          complete: () => {
            throw new Error('store down');
          },
        },
      });
      expect(await deliver(genuine)).toEqual({ status: 200, code: undefined });
      expect(logs.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
        'complete failed after the handlers succeeded: complete failed; trying again in the background',
      ]);
    });
  });
});
