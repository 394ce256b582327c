/**
 * The lease extension cases of the store suite (docs/architecture.md §7.1): `extend(eventId, token, { leaseMs })`
 * makes the lease the token holds end `leaseMs` from now, and answers false, changing nothing, for a token that no
 * longer holds it, exactly when `complete` would. Registered inside runStoreConformance for every store; a store
 * without extend (it is optional in the contract) skips them.
 */
import { MAX_STORE_DURATION_MS, type DedupeStore } from '@kyb-webhooks/core/store';
import { describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';
import type { CursorCaseContext } from './stream-cursor.js';

const LONG_MS = 60_000;

type ExtendingStore = DedupeStore & Required<Pick<DedupeStore, 'extend'>>;

/** Register the lease extension cases in the current describe block. */
export function registerLeaseExtensionCases(context: CursorCaseContext): void {
  describe('lease extension (extend)', () => {
    function extendingStore(skip: (note?: string) => void): ExtendingStore {
      const store = context.store();
      if (typeof store.extend !== 'function') {
        skip('the store has no extend(): a handler past its lease may run beside a retry');
        throw new Error('unreachable');
      }
      return store as ExtendingStore;
    }

    async function acquire(store: DedupeStore, eventId: string, leaseMs = LONG_MS): Promise<string> {
      const claim = await store.claim(eventId, { leaseMs });
      if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}, got ${claim.status}`);
      return claim.token;
    }

    it('keeps a lease past its first end: no one else acquires it, and its token still completes', async ({ skip }) => {
      const store = extendingStore(skip);
      const id = ulid();
      let token = '';
      await context.afterElapsing(
        context.shortMs,
        async () => {
          token = await acquire(store, id, context.shortMs);
          expect(await store.extend(id, token, { leaseMs: LONG_MS })).toBe(true);
        },
        async () => {
          expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
          expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(true);
          expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
        },
      );
    });

    it('sets the lease to end leaseMs from now, even when that is sooner than before', async ({ skip }) => {
      const store = extendingStore(skip);
      const id = ulid();
      let token = '';
      await context.afterElapsing(
        context.shortMs,
        async () => {
          token = await acquire(store, id);
          expect(await store.extend(id, token, { leaseMs: context.shortMs })).toBe(true);
        },
        async () => {
          expect(await store.extend(id, token, { leaseMs: LONG_MS })).toBe(false);
          expect((await store.claim(id, { leaseMs: LONG_MS })).status).toBe('acquired');
        },
      );
    });

    it('answers false and changes nothing for a wrong token, an unclaimed, a completed or a released event', async ({
      skip,
    }) => {
      const store = extendingStore(skip);
      const [held, unclaimed, completed, released] = [ulid(), ulid(), ulid(), ulid()];
      const heldToken = await acquire(store, held);
      expect(await store.extend(held, `${heldToken}x`, { leaseMs: LONG_MS })).toBe(false);
      expect(await store.extend(unclaimed, heldToken, { leaseMs: LONG_MS })).toBe(false);
      const completedToken = await acquire(store, completed);
      expect(await store.complete(completed, completedToken, { retainMs: LONG_MS })).toBe(true);
      expect(await store.extend(completed, completedToken, { leaseMs: LONG_MS })).toBe(false);
      const releasedToken = await acquire(store, released);
      expect(await store.release(released, releasedToken)).toBe(true);
      expect(await store.extend(released, releasedToken, { leaseMs: LONG_MS })).toBe(false);

      expect(await store.claim(held, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect((await store.claim(unclaimed, { leaseMs: LONG_MS })).status).toBe('acquired');
      expect(await store.claim(completed, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
      expect((await store.claim(released, { leaseMs: LONG_MS })).status).toBe('acquired');
      expect(await store.complete(held, heldToken, { retainMs: LONG_MS })).toBe(true);
    });

    it('answers false once the lease ended, before and after another claim takes the event over', async ({ skip }) => {
      const store = extendingStore(skip);
      const [idle, taken] = [ulid(), ulid()];
      const tokens: Record<string, string> = {};
      await context.afterElapsing(
        context.shortMs,
        async () => {
          tokens.idle = await acquire(store, idle, context.shortMs);
          tokens.taken = await acquire(store, taken, context.shortMs);
        },
        async () => {
          expect(await store.extend(idle, tokens.idle!, { leaseMs: LONG_MS })).toBe(false);
          expect((await store.claim(idle, { leaseMs: LONG_MS })).status).toBe('acquired');
          const retry = await acquire(store, taken);
          expect(await store.extend(taken, tokens.taken!, { leaseMs: LONG_MS })).toBe(false);
          expect(await store.extend(taken, retry, { leaseMs: LONG_MS })).toBe(true);
          expect(await store.complete(taken, tokens.taken!, { retainMs: LONG_MS })).toBe(false);
          expect(await store.complete(taken, retry, { retainMs: LONG_MS })).toBe(true);
        },
      );
    });

    it.for<[string, number]>([
      ['NaN', Number.NaN],
      ['0', 0],
      ['-1', -1],
      ['past MAX_STORE_DURATION_MS', MAX_STORE_DURATION_MS + 1],
    ])('refuses a lease of %s with a RangeError and leaves the lease as it was', async ([, leaseMs], { skip }) => {
      const store = extendingStore(skip);
      const id = ulid();
      const token = await acquire(store, id);
      await expect(Promise.resolve().then(() => store.extend(id, token, { leaseMs }))).rejects.toThrow(RangeError);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(true);
    });
  });
}
