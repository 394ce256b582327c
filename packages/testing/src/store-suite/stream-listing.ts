/**
 * The stream listing cases of the store suite: `listStreams` finds the streams whose cursor was written since a time,
 * page by page, never skipping one, so that recovery by `since` replays every stream the receiver saw. Registered
 * inside runStoreConformance for every store; a store without the listing skips them.
 */
import {
  isStreamCursorStore,
  type DedupeStore,
  type StreamActivity,
  type StreamCursorStore,
} from '@kyb-webhooks/core/store';
import { describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';
import type { CursorCaseContext } from './stream-cursor.js';

const LONG_MS = 60_000;

type ListingStore = StreamCursorStore & Required<Pick<StreamCursorStore, 'listStreams'>>;

/** Register the listing cases in the current describe block. */
export function registerStreamListingCases(context: CursorCaseContext): void {
  describe('stream listing', () => {
    function listingStore(skip: (note?: string) => void, which: 'store' | 'peer' = 'store'): ListingStore {
      const store: DedupeStore = which === 'store' ? context.store() : context.peer();
      if (!isStreamCursorStore(store) || typeof store.listStreams !== 'function') {
        skip('the store does not list streams (StreamCursorStore.listStreams)');
        throw new Error('unreachable');
      }
      return store as ListingStore;
    }

    /** Every page from `activeSince`, checking the page size and order on the way. */
    async function listAll(
      store: ListingStore,
      activeSince: number,
      limit = 1000,
    ): Promise<{ streams: StreamActivity[]; pages: number }> {
      const streams: StreamActivity[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = await store.listStreams({ activeSince, limit, ...(after === undefined ? {} : { after }) });
        pages += 1;
        expect(page.streams.length).toBeLessThanOrEqual(limit);
        streams.push(...page.streams);
        after = page.next;
        if (pages > 10_000) throw new Error('listStreams never ended');
      } while (after !== undefined);
      return { streams, pages };
    }

    /** The streams of this case only: the store is shared with the other cases. */
    const own = (streams: StreamActivity[], ids: readonly string[]) =>
      streams.filter((stream) => ids.includes(stream.streamId));

    async function completeAt(
      store: StreamCursorStore,
      streamId: string,
      seq: number,
      firstSeq: 0 | 1 = 0,
    ): Promise<void> {
      const eventId = ulid();
      const claim = await store.claim(eventId, { leaseMs: LONG_MS });
      if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
      expect(await store.completeInOrder(eventId, claim.token, { retainMs: LONG_MS, streamId, seq, firstSeq })).toBe(
        'completed',
      );
    }

    it('lists a stream completed in order and one advanced by advanceCursor, with their cursor and activity; a stream never written is not listed', async ({
      skip,
    }) => {
      const store = listingStore(skip);
      const [completed, advanced, never] = [`req_${ulid()}`, `req_${ulid()}`, `req_${ulid()}`];
      await completeAt(store, completed, 0);
      await completeAt(store, completed, 1);
      expect(await store.advanceCursor(advanced, 7)).toBe(true);
      expect(await store.getCursor(never)).toBeNull();
      const listed = own((await listAll(store, 0)).streams, [completed, advanced, never]);
      expect(listed.map(({ streamId, seq }) => ({ streamId, seq })).sort((a, b) => a.seq - b.seq)).toEqual([
        { streamId: completed, seq: 1 },
        { streamId: advanced, seq: 7 },
      ]);
      for (const stream of listed) expect(Number.isSafeInteger(stream.activeAt) && stream.activeAt > 0).toBe(true);
    });

    it('does not list a stream whose cursor was only read with the firstEvent hint, and lists it once its first event completed', async ({
      skip,
    }) => {
      const store = listingStore(skip);
      const streamId = `req_${ulid()}`;
      expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
      expect(own((await listAll(store, 0)).streams, [streamId])).toEqual([]);
      await completeAt(store, streamId, 0);
      expect(own((await listAll(store, 0)).streams, [streamId]).map(({ seq }) => seq)).toEqual([0]);
    });

    it('lists streams written at or after activeSince only, and a stream written again is active again', async ({
      skip,
    }) => {
      const store = listingStore(skip);
      const [old, recent] = [`req_${ulid()}`, `req_${ulid()}`];
      let oldActiveAt = 0;
      await context.afterElapsing(
        context.shortMs,
        async () => {
          expect(await store.advanceCursor(old, 1, { retainMs: LONG_MS })).toBe(true);
          oldActiveAt = own((await listAll(store, 0)).streams, [old])[0]!.activeAt;
        },
        async () => {
          await completeAt(store, recent, 0);
          const recentActiveAt = own((await listAll(store, 0)).streams, [recent])[0]!.activeAt;
          expect(recentActiveAt).toBeGreaterThan(oldActiveAt);
          // At the boundary itself the stream counts as active (at or after).
          expect(own((await listAll(store, recentActiveAt)).streams, [old, recent]).map((s) => s.streamId)).toEqual([
            recent,
          ]);
          expect(own((await listAll(store, oldActiveAt)).streams, [old, recent]).map((s) => s.streamId)).toEqual([
            old,
            recent,
          ]);
          expect(await store.advanceCursor(old, 2, { retainMs: LONG_MS })).toBe(true);
          const again = own((await listAll(store, recentActiveAt)).streams, [old, recent]);
          expect(again.map((s) => [s.streamId, s.seq]).sort()).toEqual(
            [
              [old, 2],
              [recent, 0],
            ].sort(),
          );
        },
      );
    });

    it('pages through many streams, including ones active in the same millisecond: each exactly once, in activity order, the last page without next', async ({
      skip,
    }) => {
      const store = listingStore(skip);
      const ids = Array.from({ length: 11 }, () => `req_${ulid()}`);
      await Promise.all(ids.map((id, index) => store.advanceCursor(id, index)));
      const since = Math.min(...own((await listAll(store, 0)).streams, ids).map((s) => s.activeAt));
      const { streams, pages } = await listAll(store, since, 3);
      expect(pages).toBeGreaterThanOrEqual(4);
      expect(
        own(streams, ids)
          .map((s) => s.streamId)
          .sort(),
      ).toEqual([...ids].sort());
      // Nothing listed twice (no stream was written while paging), and never out of activity order.
      expect(new Set(streams.map((s) => s.streamId)).size).toBe(streams.length);
      for (let i = 1; i < streams.length; i++)
        expect(streams[i]!.activeAt).toBeGreaterThanOrEqual(streams[i - 1]!.activeAt);
    });

    it('never skips a stream written while paging: it comes again on a later page', async ({ skip }) => {
      const store = listingStore(skip);
      const ids = Array.from({ length: 6 }, () => `req_${ulid()}`);
      for (const [index, id] of ids.entries()) expect(await store.advanceCursor(id, index)).toBe(true);
      const since = Math.min(...own((await listAll(store, 0)).streams, ids).map((s) => s.activeAt));
      const seen: string[] = [];
      let after: string | undefined;
      let first = true;
      do {
        const page = await store.listStreams({
          activeSince: since,
          limit: 2,
          ...(after === undefined ? {} : { after }),
        });
        seen.push(...page.streams.map((s) => s.streamId));
        if (first) {
          // Every stream of this case is written again after the first page: the ones not listed yet must not be lost.
          for (const [index, id] of ids.entries()) await store.advanceCursor(id, index + 100);
          first = false;
        }
        after = page.next;
      } while (after !== undefined);
      for (const id of ids) expect(seen).toContain(id);
    });

    it('lists what another client wrote (the same data for every process of a fleet)', async ({ skip }) => {
      const [store, peer] = [listingStore(skip), listingStore(skip, 'peer')];
      const streamId = `req_${ulid()}`;
      await completeAt(peer, streamId, 1, 1);
      expect(own((await listAll(store, 0)).streams, [streamId]).map((s) => s.seq)).toEqual([1]);
    });

    it('does not list a stream whose cursor retention passed', async ({ skip }) => {
      const store = listingStore(skip);
      const [short, long] = [`req_${ulid()}`, `req_${ulid()}`];
      await context.afterElapsing(
        context.shortMs,
        async () => {
          expect(await store.advanceCursor(short, 3, { retainMs: context.shortMs })).toBe(true);
          expect(await store.advanceCursor(long, 3, { retainMs: LONG_MS })).toBe(true);
          expect(own((await listAll(store, 0)).streams, [short, long])).toHaveLength(2);
        },
        async () => {
          expect(own((await listAll(store, 0)).streams, [short, long]).map((s) => s.streamId)).toEqual([long]);
        },
      );
    });

    it('keeps listing a stream kept longer after a stream with a shorter retention is written (each stream expires on its own)', async ({
      skip,
    }) => {
      const store = listingStore(skip);
      const [kept, brief] = [`req_${ulid()}`, `req_${ulid()}`];
      await context.afterElapsing(
        context.shortMs,
        async () => {
          expect(await store.advanceCursor(kept, 5, { retainMs: LONG_MS })).toBe(true);
        },
        async () => {
          // A write whose retention is shorter than the time since `kept` was written must not drop `kept`.
          expect(await store.advanceCursor(brief, 1, { retainMs: context.shortMs })).toBe(true);
          expect(await store.getCursor(kept)).toBe(5);
          const listed = own((await listAll(store, 0)).streams, [kept, brief]);
          expect(listed.map((s) => [s.streamId, s.seq])).toEqual(
            expect.arrayContaining([
              [kept, 5],
              [brief, 1],
            ]),
          );
          expect(listed).toHaveLength(2);
        },
      );
    });

    it.for([
      { what: 'activeSince NaN', options: { activeSince: Number.NaN } },
      { what: 'activeSince missing', options: {} },
      { what: 'limit 0', options: { activeSince: 0, limit: 0 } },
      { what: 'limit 1001', options: { activeSince: 0, limit: 1001 } },
      { what: 'a fractional limit', options: { activeSince: 0, limit: 2.5 } },
      { what: 'an empty after', options: { activeSince: 0, after: '' } },
      { what: 'an after no store made', options: { activeSince: 0, after: 'page-2' } },
    ])('rejects $what with a RangeError', async ({ options }, { skip }) => {
      const store = listingStore(skip);
      await expect(store.listStreams(options as never)).rejects.toThrow(RangeError);
    });
  });
}
