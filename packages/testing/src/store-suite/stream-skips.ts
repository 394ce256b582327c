/**
 * The skip cases of the store suite (docs/architecture.md §7.3, issue 26 §2): `skipSeq` records why a seq was skipped AND moves the
 * cursor past it in one atomic step, only from `seq - 1` (or a stream's start), and `listSkips` reads the records
 * back. Registered inside runStoreConformance for every store; a store without skipSeq skips them.
 */
import {
  isStreamCursorStore,
  MAX_SKIP_REASON_CHARS,
  type DedupeStore,
  type StreamCursorStore,
} from '@kyb-webhooks/core/store';
import { describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';
import type { CursorCaseContext } from './stream-cursor.js';

const LONG_MS = 60_000;

const newStream = (): string => `req_${ulid()}`;

type SkippingStore = StreamCursorStore & Required<Pick<StreamCursorStore, 'skipSeq' | 'listSkips'>>;

/** Register the skip cases in the current describe block. */
export function registerStreamSkipCases(context: CursorCaseContext): void {
  describe('stream skips (skipSeq, listSkips)', () => {
    function skippingStore(skip: (note?: string) => void, which: 'store' | 'peer' = 'store'): SkippingStore {
      const store: DedupeStore = which === 'store' ? context.store() : context.peer();
      if (!isStreamCursorStore(store) || typeof store.skipSeq !== 'function' || typeof store.listSkips !== 'function') {
        skip('the store records no skips (it does not implement skipSeq and listSkips)');
        throw new Error('unreachable');
      }
      return store as SkippingStore;
    }

    /** Claim a new event and complete it in order at `seq`. */
    async function processAt(store: StreamCursorStore, streamId: string, seq: number, firstSeq: 0 | 1 = 0) {
      const eventId = ulid();
      const claim = await store.claim(eventId, { leaseMs: LONG_MS });
      if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}, got ${claim.status}`);
      return store.completeInOrder(eventId, claim.token, { retainMs: LONG_MS, streamId, seq, firstSeq });
    }

    it('skips the seq after the cursor: records the reason and event id, and moves the cursor to it, for both clients', async ({
      skip,
    }) => {
      const [store, peer] = [skippingStore(skip), skippingStore(skip, 'peer')];
      const streamId = newStream();
      expect(await processAt(store, streamId, 0)).toBe('completed');
      const before = Date.now();
      const eventId = ulid();
      expect(
        await store.skipSeq(streamId, 1, { reason: 'release purged; ops ticket 42', eventId, retainMs: LONG_MS }),
      ).toBe(true);
      expect(await peer.getCursor(streamId)).toBe(1);
      const skips = await peer.listSkips(streamId);
      expect(skips.map(({ seq, reason, eventId: id }) => ({ seq, reason, eventId: id }))).toEqual([
        { seq: 1, reason: 'release purged; ops ticket 42', eventId },
      ]);
      // The store's clock: within a minute of the test's (a database server may run on another host).
      expect(Math.abs(skips[0]!.skippedAt - before)).toBeLessThan(60_000);
      // The stream goes on after the skip.
      expect(await processAt(store, streamId, 2)).toBe('completed');
    });

    it('records a skip without an event id, and keeps the reason exactly as given (unicode, quotes, the longest allowed)', async ({
      skip,
    }) => {
      const store = skippingStore(skip);
      const streamId = newStream();
      await processAt(store, streamId, 0);
      const odd = `checked by Zoë ‘ops’ "lead" 🔑; DROP TABLE x; -- `;
      const longest = 'r'.repeat(MAX_SKIP_REASON_CHARS);
      expect(await store.skipSeq(streamId, 1, { reason: odd, retainMs: LONG_MS })).toBe(true);
      expect(await store.skipSeq(streamId, 2, { reason: longest, retainMs: LONG_MS })).toBe(true);
      const skips = await store.listSkips(streamId);
      expect(skips.map(({ seq, reason, eventId }) => ({ seq, reason, eventId }))).toEqual([
        { seq: 1, reason: odd, eventId: undefined },
        { seq: 2, reason: longest, eventId: undefined },
      ]);
    });

    it.for([0, 1] as const)(
      'starts a stream with no cursor when the skipped seq is its firstSeq %i, and only then',
      async (firstSeq, { skip }) => {
        const store = skippingStore(skip);
        const streamId = newStream();
        expect(
          await store.skipSeq(streamId, firstSeq + 1, { reason: 'not the start', retainMs: LONG_MS, firstSeq }),
        ).toBe(false);
        expect(await store.getCursor(streamId)).toBeNull();
        expect(
          await store.skipSeq(streamId, firstSeq, { reason: 'the start, purged', retainMs: LONG_MS, firstSeq }),
        ).toBe(true);
        expect(await store.getCursor(streamId)).toBe(firstSeq);
      },
    );

    it('moves nothing and records nothing when the cursor is not at seq - 1 (behind, at, or beyond it)', async ({
      skip,
    }) => {
      const store = skippingStore(skip);
      const streamId = newStream();
      await processAt(store, streamId, 0);
      await processAt(store, streamId, 1);
      for (const seq of [0, 1, 3, 10])
        expect(await store.skipSeq(streamId, seq, { reason: 'wrong place', retainMs: LONG_MS })).toBe(false);
      expect(await store.getCursor(streamId)).toBe(1);
      expect(await store.listSkips(streamId)).toEqual([]);
    });

    it('lets exactly one of 20 concurrent skips of one seq move the cursor, from either client, and records one skip', async ({
      skip,
    }) => {
      const [store, peer] = [skippingStore(skip), skippingStore(skip, 'peer')];
      const streamId = newStream();
      await processAt(store, streamId, 0);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? store : peer).skipSeq(streamId, 1, { reason: `decision ${i}`, retainMs: LONG_MS }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.getCursor(streamId)).toBe(1);
      expect(await store.listSkips(streamId)).toHaveLength(1);
    });

    it('keeps the skips of each stream apart, and lists none for a stream never skipped', async ({ skip }) => {
      const store = skippingStore(skip);
      const [a, b] = [newStream(), newStream()];
      await processAt(store, a, 0);
      await processAt(store, b, 0);
      await store.skipSeq(a, 1, { reason: 'a', retainMs: LONG_MS });
      expect((await store.listSkips(a)).map((entry) => entry.reason)).toEqual(['a']);
      expect(await store.listSkips(b)).toEqual([]);
      expect(await store.listSkips(newStream())).toEqual([]);
    });

    it('refuses a blank or too long reason, a bad seq or stream id, before touching anything', async ({ skip }) => {
      const store = skippingStore(skip);
      const streamId = newStream();
      await processAt(store, streamId, 0);
      await expect(store.skipSeq(streamId, 1, { reason: '  ', retainMs: LONG_MS })).rejects.toThrow(RangeError);
      await expect(
        store.skipSeq(streamId, 1, { reason: 'x'.repeat(MAX_SKIP_REASON_CHARS + 1), retainMs: LONG_MS }),
      ).rejects.toThrow(RangeError);
      await expect(store.skipSeq(streamId, -1, { reason: 'x', retainMs: LONG_MS })).rejects.toThrow(RangeError);
      await expect(store.skipSeq('', 1, { reason: 'x', retainMs: LONG_MS })).rejects.toThrow(RangeError);
      expect(await store.getCursor(streamId)).toBe(0);
      expect(await store.listSkips(streamId)).toEqual([]);
    });
  });
}
