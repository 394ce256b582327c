/**
 * The stream cursor cases of the store suite (docs/architecture.md §7.2): a store that keeps per-stream cursors must advance them
 * only in order, atomically with the event's completion, and agree across clients. Registered inside
 * runStoreConformance for every store; a store without cursors skips them.
 */
import { isStreamCursorStore, type DedupeStore, type StreamCursorStore } from '@kyb-webhooks/core/store';
import { describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';

/** What the cursor cases need from the surrounding suite, read when a case runs (the store is made in beforeAll). */
export interface CursorCaseContext {
  store(): DedupeStore;
  /** A second store on its own connection to the same data, or the store itself when the harness has none. */
  peer(): DedupeStore;
  /** Let `ms` pass on the store's clock, taking the suite's turn when the clock is shared (see runStoreConformance). */
  afterElapsing(ms: number, before: () => Promise<void>, after: () => Promise<void>): Promise<void>;
  shortMs: number;
}

const LONG_MS = 60_000;

/** Each case uses a stream of its own, so cases never see each other's cursors. */
const newStream = (): string => `req_${ulid()}`;

/** Register the cursor cases in the current describe block. */
export function registerStreamCursorCases(context: CursorCaseContext): void {
  describe('stream cursors', () => {
    /** The store as a cursor store; the case is skipped for a store without cursors (a plain DedupeStore). */
    function cursorStore(skip: (note?: string) => void, which: 'store' | 'peer' = 'store'): StreamCursorStore {
      const store = which === 'store' ? context.store() : context.peer();
      if (!isStreamCursorStore(store)) {
        skip('the store keeps no stream cursors (it does not implement StreamCursorStore)');
        throw new Error('unreachable');
      }
      return store;
    }

    async function claimed(store: DedupeStore, eventId = ulid()): Promise<{ eventId: string; token: string }> {
      const claim = await store.claim(eventId, { leaseMs: LONG_MS });
      if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}, got ${claim.status}`);
      return { eventId, token: claim.token };
    }

    /** Claim a new event and complete it in order at `seq`. */
    async function processAt(store: StreamCursorStore, streamId: string, seq: number, firstSeq: 0 | 1 = 0) {
      const { eventId, token } = await claimed(store);
      return store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq, firstSeq });
    }

    it('has no cursor for a stream never seen', async ({ skip }) => {
      const store = cursorStore(skip);
      expect(await store.getCursor(newStream())).toBeNull();
    });

    it.for([0, 1] as const)(
      'completes the first event of a stream at firstSeq %i: the event is completed and the cursor is at it',
      async (firstSeq, { skip }) => {
        const store = cursorStore(skip);
        const streamId = newStream();
        const { eventId, token } = await claimed(store);
        expect(
          await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq: firstSeq, firstSeq }),
        ).toBe('completed');
        expect(await store.getCursor(streamId)).toBe(firstSeq);
        expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
      },
    );

    // Ordering reads the cursor with the firstEvent hint before a stream's first event; a store may prepare for
    // completeInOrder in that read (MySQL inserts an expired placeholder row), but every answer stays the same.
    it('answers null to getCursor told firstEvent on a stream never seen, and leaves no cursor to read, with or without the hint, from either client', async ({
      skip,
    }) => {
      const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
      const streamId = newStream();
      expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
      expect(await store.getCursor(streamId)).toBeNull();
      expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
      expect(await peer.getCursor(streamId)).toBeNull();
    });

    it.for([0, 1] as const)(
      'completes the first event at firstSeq %i after getCursor told firstEvent: the event is completed and the cursor is at it',
      async (firstSeq, { skip }) => {
        const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
        const streamId = newStream();
        const { eventId, token } = await claimed(store);
        expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
        expect(
          await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq: firstSeq, firstSeq }),
        ).toBe('completed');
        expect(await store.getCursor(streamId)).toBe(firstSeq);
        expect(await peer.getCursor(streamId)).toBe(firstSeq);
        expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
      },
    );

    it('answers a stream under way with its cursor when getCursor is told firstEvent (a redelivered first event)', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      expect(await processAt(store, streamId, 0)).toBe('completed');
      expect(await processAt(store, streamId, 1)).toBe('completed');
      expect(await store.getCursor(streamId, { firstEvent: true })).toBe(1);
      expect(await processAt(store, streamId, 0)).toBe('cursor_moved');
      expect(await store.getCursor(streamId)).toBe(1);
    });

    it('answers lease_lost to a wrong token on a first event after getCursor told firstEvent, then completes it with the right one', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      const { eventId, token } = await claimed(store);
      expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
      const options = { retainMs: LONG_MS, streamId, seq: 0, firstSeq: 0 } as const;
      expect(
        await store.completeInOrder(
          eventId,
          token.replace(/^./, (c) => (c === '0' ? '1' : '0')),
          options,
        ),
      ).toBe('lease_lost');
      expect(await store.getCursor(streamId)).toBeNull();
      expect(await store.completeInOrder(eventId, token, options)).toBe('completed');
      expect(await store.getCursor(streamId)).toBe(0);
    });

    it('answers cursor_moved to a first event told to getCursor when another client started the stream meanwhile', async ({
      skip,
    }) => {
      const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
      const streamId = newStream();
      const { eventId, token } = await claimed(store);
      expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
      expect(await processAt(peer, streamId, 0)).toBe('completed');
      expect(await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq: 0, firstSeq: 0 })).toBe(
        'cursor_moved',
      );
      expect(await store.getCursor(streamId)).toBe(0);
      expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
    });

    it.for([
      { firstSeq: 0, seq: 1, why: 'seq 0 never came' },
      { firstSeq: 1, seq: 0, why: 'seq 0 is before the first seq' },
      { firstSeq: 1, seq: 2, why: 'seq 1 never came' },
      { firstSeq: 0, seq: 7, why: 'seqs 0 to 6 never came' },
    ] as const)(
      'refuses seq $seq on a new stream with firstSeq $firstSeq ($why): cursor_moved, nothing changed, the lease still held',
      async ({ firstSeq, seq }, { skip }) => {
        const store = cursorStore(skip);
        const streamId = newStream();
        const { eventId, token } = await claimed(store);
        expect(await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq, firstSeq })).toBe(
          'cursor_moved',
        );
        expect(await store.getCursor(streamId)).toBeNull();
        expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
        // Refused but not lost: the holder can still release it, so the service's retry runs it.
        expect(await store.release(eventId, token)).toBe(true);
      },
    );

    it('advances in order, one seq at a time', async ({ skip }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      for (let seq = 1; seq <= 5; seq++) {
        expect(await processAt(store, streamId, seq, 1)).toBe('completed');
        expect(await store.getCursor(streamId)).toBe(seq);
      }
    });

    it('refuses a gap (cursor_moved): the cursor stays, the event stays claimed and can still be completed plainly', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      expect(await processAt(store, streamId, 0)).toBe('completed');
      expect(await processAt(store, streamId, 1)).toBe('completed');
      const { eventId, token } = await claimed(store);
      expect(await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq: 3, firstSeq: 0 })).toBe(
        'cursor_moved',
      );
      expect(await store.getCursor(streamId)).toBe(1);
      expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.complete(eventId, token, { retainMs: LONG_MS })).toBe(true);
      expect(await store.getCursor(streamId)).toBe(1);
    });

    it.for([
      { seq: 3, what: 'a second event at the cursor (duplicate seq)' },
      { seq: 2, what: 'a late event behind the cursor' },
      { seq: 0, what: 'the first seq again' },
    ])('refuses $what (seq $seq, cursor at 3): cursor_moved and the cursor stays', async ({ seq }, { skip }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      for (let step = 0; step <= 3; step++) expect(await processAt(store, streamId, step)).toBe('completed');
      const { eventId, token } = await claimed(store);
      expect(await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq, firstSeq: 0 })).toBe(
        'cursor_moved',
      );
      expect(await store.getCursor(streamId)).toBe(3);
      expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
    });

    it.for([
      { case: 'a wrong token', token: (right: string) => right.replace(/^./, (c) => (c === '0' ? '1' : '0')) },
      { case: 'an empty token', token: () => '' },
    ])(
      'answers lease_lost to $case, even at the seq that fits, and changes neither the cursor nor the event',
      async ({ token: wrong }, { skip }) => {
        const store = cursorStore(skip);
        const streamId = newStream();
        expect(await processAt(store, streamId, 0)).toBe('completed');
        const { eventId, token } = await claimed(store);
        expect(
          await store.completeInOrder(eventId, wrong(token), { retainMs: LONG_MS, streamId, seq: 1, firstSeq: 0 }),
        ).toBe('lease_lost');
        expect(await store.getCursor(streamId)).toBe(0);
        expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
        expect(await store.completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq: 1, firstSeq: 0 })).toBe(
          'completed',
        );
        expect(await store.getCursor(streamId)).toBe(1);
      },
    );

    it('answers lease_lost for an event never claimed, released, or already completed; the cursor does not move', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      const options = { retainMs: LONG_MS, streamId, seq: 0, firstSeq: 0 } as const;
      expect(await store.completeInOrder(ulid(), 'a'.repeat(32), options)).toBe('lease_lost');
      const released = await claimed(store);
      expect(await store.release(released.eventId, released.token)).toBe(true);
      expect(await store.completeInOrder(released.eventId, released.token, options)).toBe('lease_lost');
      const done = await claimed(store);
      expect(await store.complete(done.eventId, done.token, { retainMs: LONG_MS })).toBe(true);
      expect(await store.completeInOrder(done.eventId, done.token, options)).toBe('lease_lost');
      expect(await store.getCursor(streamId)).toBeNull();
      // The same event completed in order once is not completed again at the next seq.
      const once = await claimed(store);
      expect(await store.completeInOrder(once.eventId, once.token, options)).toBe('completed');
      expect(await store.completeInOrder(once.eventId, once.token, { ...options, seq: 1 })).toBe('lease_lost');
      expect(await store.getCursor(streamId)).toBe(0);
    });

    it('keeps streams apart: ids differing in case, by a suffix, or equal to an event id', async ({ skip }) => {
      const store = cursorStore(skip);
      const base = newStream();
      const { eventId, token } = await claimed(store);
      const streams = [base, base.toLowerCase(), `${base}x`, `{${base}}`, `${base} é`, eventId];
      for (const [index, streamId] of streams.entries()) {
        expect(await store.advanceCursor(streamId, index + 10)).toBe(true);
      }
      expect(await Promise.all(streams.map((streamId) => store.getCursor(streamId)))).toEqual(
        streams.map((_, index) => index + 10),
      );
      // A cursor named like an event leaves the event's record alone.
      expect(await store.complete(eventId, token, { retainMs: LONG_MS })).toBe(true);
    });

    it('advanceCursor moves forward only: from none, forward, never back, not to the same seq', async ({ skip }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      expect(await store.advanceCursor(streamId, 4)).toBe(true);
      expect(await store.getCursor(streamId)).toBe(4);
      expect(await store.advanceCursor(streamId, 9)).toBe(true);
      expect(await store.getCursor(streamId)).toBe(9);
      expect(await store.advanceCursor(streamId, 3)).toBe(false);
      expect(await store.advanceCursor(streamId, 9)).toBe(false);
      expect(await store.getCursor(streamId)).toBe(9);
      // In order resumes after the skipped gap: 10 fits, an event in the skipped range does not.
      expect(await processAt(store, streamId, 7)).toBe('cursor_moved');
      expect(await processAt(store, streamId, 10)).toBe('completed');
      expect(await store.getCursor(streamId)).toBe(10);
    });

    it('keeps seqs exact up to the largest safe integer (no float or 32-bit truncation in any driver)', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      const top = Number.MAX_SAFE_INTEGER;
      expect(await store.advanceCursor(streamId, top - 2)).toBe(true);
      expect(await store.getCursor(streamId)).toBe(top - 2);
      expect(await processAt(store, streamId, top)).toBe('cursor_moved');
      expect(await processAt(store, streamId, top - 1)).toBe('completed');
      expect(await processAt(store, streamId, top)).toBe('completed');
      expect(await store.getCursor(streamId)).toBe(top);
      expect(await store.advanceCursor(streamId, top)).toBe(false);
    });

    it('advanceCursor races across clients end at the highest seq, and only raises report true', async ({ skip }) => {
      const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
      const streamId = newStream();
      const seqs = Array.from({ length: 40 }, (_, i) => (i * 17) % 40);
      const moved = await Promise.all(seqs.map((seq, i) => (i % 2 ? peer : store).advanceCursor(streamId, seq)));
      expect(await store.getCursor(streamId)).toBe(39);
      expect(await peer.getCursor(streamId)).toBe(39);
      expect(moved.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      expect(moved[seqs.indexOf(39)]).toBe(true);
    });

    it.for([
      { where: 'an existing stream', seq: 1 },
      { where: 'a new stream (its first seq)', seq: 0 },
    ])(
      'of 50 concurrent completeInOrder of one seq on $where by different events across clients, exactly one completes',
      async ({ seq }, { skip }) => {
        const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
        const streamId = newStream();
        if (seq === 1) expect(await processAt(store, streamId, 0)).toBe('completed');
        const events = await Promise.all(Array.from({ length: 50 }, (_, i) => claimed(i % 2 ? peer : store)));
        const outcomes = await Promise.all(
          events.map(({ eventId, token }, i) =>
            (i % 2 ? peer : store).completeInOrder(eventId, token, { retainMs: LONG_MS, streamId, seq, firstSeq: 0 }),
          ),
        );
        expect(outcomes.filter((outcome) => outcome === 'completed')).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome === 'cursor_moved')).toHaveLength(49);
        expect(await store.getCursor(streamId)).toBe(seq);
        const states = await Promise.all(events.map(({ eventId }) => store.claim(eventId, { leaseMs: LONG_MS })));
        expect(states.filter((state) => state.status === 'completed')).toHaveLength(1);
      },
    );

    it.for([0, 1] as const)(
      '50 consecutive seqs (firstSeq %i) completed concurrently across clients, each retrying until its turn, end with the cursor at the last and no step lost',
      async (firstSeq, { skip }) => {
        const [store, peer] = [cursorStore(skip), cursorStore(skip, 'peer')];
        const streamId = newStream();
        const count = 50;
        const events = await Promise.all(Array.from({ length: count }, (_, i) => claimed(i % 2 ? peer : store)));
        const completedAt: number[] = [];
        // Each caller retries its own seq until its predecessor is done, as a receiver holding an out-of-order event
        // would; if a step were lost (the cursor skipped or stuck), some caller would run out of attempts.
        await Promise.all(
          events.map(async ({ eventId, token }, i) => {
            const client = i % 2 ? peer : store;
            const seq = firstSeq + i;
            for (let attempt = 0; attempt < 5_000; attempt++) {
              const outcome = await client.completeInOrder(eventId, token, {
                retainMs: LONG_MS,
                streamId,
                seq,
                firstSeq,
              });
              if (outcome === 'completed') {
                completedAt.push(seq);
                return;
              }
              expect(outcome).toBe('cursor_moved');
              await new Promise((resolve) => setTimeout(resolve, 1));
            }
            throw new Error(`seq ${seq} never got its turn`);
          }),
        );
        // Answers over two connections arrive in any order, so the set is compared: every seq completed exactly once.
        expect(completedAt.sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => firstSeq + i));
        expect(await store.getCursor(streamId)).toBe(firstSeq + count - 1);
        expect(await peer.getCursor(streamId)).toBe(firstSeq + count - 1);
        const states = await Promise.all(events.map(({ eventId }) => store.claim(eventId, { leaseMs: LONG_MS })));
        expect(states.every((state) => state.status === 'completed')).toBe(true);
      },
    );

    it.for([
      { what: 'a negative seq', streamId: 'req_x', seq: -1, firstSeq: 0 },
      { what: 'a fractional seq', streamId: 'req_x', seq: 1.5, firstSeq: 0 },
      { what: 'a seq beyond 2^53', streamId: 'req_x', seq: 2 ** 53, firstSeq: 0 },
      { what: 'firstSeq 2', streamId: 'req_x', seq: 2, firstSeq: 2 },
      { what: 'an empty stream id', streamId: '', seq: 0, firstSeq: 0 },
      { what: 'a stream id of 256 characters', streamId: 'x'.repeat(256), seq: 0, firstSeq: 0 },
      // PostgreSQL refuses NUL; stores that keep UTF-8 turn every lone surrogate into one replacement character.
      { what: 'a stream id with a NUL character', streamId: 'req_\u0000x', seq: 0, firstSeq: 0 },
      { what: 'a stream id with a lone surrogate', streamId: 'req_\ud800', seq: 0, firstSeq: 0 },
    ])('rejects $what with a RangeError before touching anything', async ({ streamId, seq, firstSeq }, { skip }) => {
      const store = cursorStore(skip);
      const { eventId, token } = await claimed(store);
      const options = { retainMs: LONG_MS, streamId, seq, firstSeq: firstSeq as 0 | 1 };
      await expect(store.completeInOrder(eventId, token, options)).rejects.toThrow(RangeError);
      // advanceCursor takes no firstSeq, so only the other shapes apply to it.
      if (firstSeq !== 2) await expect(store.advanceCursor(streamId, seq)).rejects.toThrow(RangeError);
      expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
    });

    it('keeps a cursor for the retention it was advanced with, then reads it as none, so only firstSeq starts the stream again', async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      await context.afterElapsing(
        context.shortMs,
        async () => {
          const { eventId, token } = await claimed(store);
          expect(
            await store.completeInOrder(eventId, token, { retainMs: context.shortMs, streamId, seq: 0, firstSeq: 0 }),
          ).toBe('completed');
          expect(await store.getCursor(streamId)).toBe(0);
        },
        async () => {
          expect(await store.getCursor(streamId)).toBeNull();
          expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
          expect(await processAt(store, streamId, 1)).toBe('cursor_moved');
          expect(await processAt(store, streamId, 0)).toBe('completed');
          expect(await store.getCursor(streamId)).toBe(0);
          expect(await store.advanceCursor(streamId, 5, { retainMs: context.shortMs })).toBe(true);
        },
      );
    });

    it.for([Number.NaN, 0, -1, 1e300])(
      'rejects a cursor retention of %s with a RangeError before touching anything',
      async (retention, { skip }) => {
        const store = cursorStore(skip);
        const streamId = newStream();
        const { eventId, token } = await claimed(store);
        const options = { retainMs: LONG_MS, cursorRetainMs: retention, streamId, seq: 0, firstSeq: 0 } as const;
        await expect(store.completeInOrder(eventId, token, options)).rejects.toThrow(RangeError);
        await expect(store.advanceCursor(streamId, 3, { retainMs: retention })).rejects.toThrow(RangeError);
        expect(await store.getCursor(streamId)).toBeNull();
        expect(await store.claim(eventId, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      },
    );

    it("keeps the cursor for cursorRetainMs after the record's shorter retention passed, so the stream goes on where it stood", async ({
      skip,
    }) => {
      const store = cursorStore(skip);
      const streamId = newStream();
      let eventId = '';
      await context.afterElapsing(
        context.shortMs,
        async () => {
          const claim = await claimed(store);
          eventId = claim.eventId;
          const options = {
            retainMs: context.shortMs,
            cursorRetainMs: LONG_MS,
            streamId,
            seq: 0,
            firstSeq: 0,
          } as const;
          expect(await store.completeInOrder(eventId, claim.token, options)).toBe('completed');
        },
        async () => {
          // The record went with its retention; the cursor did not.
          expect((await store.claim(eventId, { leaseMs: LONG_MS })).status).toBe('acquired');
          expect(await store.getCursor(streamId)).toBe(0);
          expect(await processAt(store, streamId, 0)).toBe('cursor_moved');
          expect(await processAt(store, streamId, 1)).toBe('completed');
        },
      );
    });
  });
}
