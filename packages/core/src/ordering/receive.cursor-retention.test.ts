/**
 * A stream's cursor outlives its events' records (ordering.cursorRetainMs): a stream idle for longer than retainMs
 * (a request awaiting votes for weeks, a business whose wallet changes once a year) goes on where it stood instead of
 * looking new, which under 'enforce' backfilled it from firstSeq and ran its old events again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { GapReport, OrderingMode } from './types.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver } from '../receiver.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 24, 3, 0, 0);
const SECRET = 'cursor-retention-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup(mode: Exclude<OrderingMode, 'off'>, ordering: { cursorRetainMs?: number } = {}, withGapHandler = true) {
  // One clock for the store and the receiver; it moves by seconds, well within the signatures' 5 minutes of skew.
  let time = NOW;
  const store = createMemoryStore({ now: () => time });
  const events = testStream(4).map((event) => ({ ...event, timestamp: Math.floor(NOW / 1000) }));
  const ran: number[] = [];
  const fetched: number[] = [];
  const gaps: GapReport[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => time,
    logger: false,
    store,
    retainMs: 1_000, // stands for the 30-day default
    ordering: streamOrdering({
      mode,
      ...ordering,
      fetchEventsAfter: async function* (_stream, after) {
        fetched.push(after);
        for (const event of events) if (event.seq > after) yield structuredClone(event);
      },
    }),
  });
  receiver.onAny((event) => {
    ran.push(event.seq);
  });
  if (withGapHandler) {
    receiver.onGap((report) => {
      gaps.push(report);
    });
  }
  const deliver = async (event: TestEnvelope) => {
    const { headers, body } = await signer.sign(event);
    return (await receiver.receive({ method: 'POST', headers, body })).status;
  };
  const answer = async (event: TestEnvelope) => {
    const { headers, body } = await signer.sign(event);
    const result = await receiver.receive({ method: 'POST', headers, body });
    return `${result.status} ${result.code ?? ''}`.trim();
  };
  return { events, ran, fetched, gaps, deliver, answer, store, idle: (ms: number) => (time += ms) };
}

describe('a stream idle for longer than retainMs', () => {
  it('enforce: goes on where it stood, its earlier events neither fetched nor run again (the default cursorRetainMs)', async () => {
    const { events, ran, fetched, deliver, idle } = setup('enforce');
    expect([await deliver(events[0]!), await deliver(events[1]!)]).toEqual([200, 200]);
    idle(5_000); // five times retainMs: every record of the stream expired
    expect(await deliver(events[2]!)).toBe(200);
    expect(ran).toEqual([0, 1, 2]);
    expect(fetched).toEqual([]);
  });

  it('detect: reports no gap', async () => {
    const { events, ran, gaps, deliver, idle } = setup('detect');
    await deliver(events[0]!);
    await deliver(events[1]!);
    idle(5_000);
    await deliver(events[2]!);
    expect(ran).toEqual([0, 1, 2]);
    expect(gaps).toEqual([]);
  });

  it('enforce: once its cursorRetainMs passed too, the stream looks new and is backfilled from firstSeq (why the default is long)', async () => {
    const { events, ran, fetched, deliver, idle } = setup('enforce', { cursorRetainMs: 2_000 });
    await deliver(events[0]!);
    await deliver(events[1]!);
    idle(1_500);
    expect(await deliver(events[2]!)).toBe(200); // within cursorRetainMs: in turn
    idle(2_500);
    expect(await deliver(events[3]!)).toBe(200);
    expect(fetched).toEqual([-1]);
    expect(ran).toEqual([0, 1, 2, 0, 1, 2, 3]);
  });
});

describe('a redelivery of an event processed longer ago than retainMs (its record expired, its cursor not)', () => {
  it('enforce, no onGap handler: is answered 200 duplicate and runs nothing', async () => {
    const { events, ran, answer, idle } = setup('enforce', {}, false);
    await answer(events[0]!);
    await answer(events[1]!);
    idle(5_000);
    // What the service sends when the merchant asks it to redeliver the stream.
    expect([await answer(events[0]!), await answer(events[1]!)]).toEqual(['200 duplicate', '200 duplicate']);
    expect(ran).toEqual([0, 1]);
    expect(await answer(events[2]!)).toBe('200');
    expect(ran).toEqual([0, 1, 2]);
  });

  it('enforce, with onGap: goes to onGap as late with recordExpired, which decides (it may be an event skipped by hand)', async () => {
    const { events, ran, gaps, answer, idle } = setup('enforce');
    await answer(events[0]!);
    await answer(events[1]!);
    idle(5_000);
    expect(await answer(events[0]!)).toBe('200 late');
    expect(gaps).toEqual([expect.objectContaining({ kind: 'late', seq: 0, expectedSeq: 2, recordExpired: true })]);
    expect(ran).toEqual([0, 1]);
  });

  it('enforce: an event behind the cursor that is newer than retainMs is still late (skipped by advanceCursor, never run)', async () => {
    const { events, ran, gaps, answer, store } = setup('enforce');
    await answer(events[0]!);
    await store.advanceCursor(events[0]!.stream_id, 2);
    expect(await answer(events[1]!)).toBe('200 late');
    expect(ran).toEqual([0]);
    expect(gaps).toEqual([expect.objectContaining({ kind: 'late', seq: 1 })]);
    expect(gaps[0]).not.toHaveProperty('recordExpired');
  });
});

describe('ordering.cursorRetainMs', () => {
  it.each([
    [
      { retainMs: 60_000, ordering: streamOrdering({ mode: 'detect', cursorRetainMs: 59_999 }) },
      /`ordering.cursorRetainMs` \(59999 ms\) must be at least retainMs \(60000 ms\)/,
    ],
    [
      { ordering: streamOrdering({ mode: 'detect', cursorRetainMs: 1e300 }) },
      /`ordering.cursorRetainMs` must be at most 3155760000000 ms \(100 years\)/,
    ],
    [
      { ordering: streamOrdering({ mode: 'detect', cursorTtlMs: 1 } as never) },
      /did you mean `ordering.cursorRetainMs`\?/,
    ],
  ])('refuses %j with config_invalid', (options, message) => {
    const create = () => createReceiver({ secrets: { '1': SECRET }, ...options } as never);
    expect(create).toThrow(message);
    expect(create).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  });
});
