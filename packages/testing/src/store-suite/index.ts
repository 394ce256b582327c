/**
 * The dedupe store conformance suite (docs/architecture.md §7): one set of cases that every `DedupeStore` must pass, whether it
 * keeps records in memory, Redis or SQL. Like keyv's store tests, a new store is done when this suite passes.
 */
import { MAX_STORE_DURATION_MS, type DedupeStore } from '@kyb-webhooks/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';
import { registerLeaseExtensionCases } from './lease-extension.js';
import { registerStreamCursorCases } from './stream-cursor.js';
import { registerStreamListingCases } from './stream-listing.js';
import { registerStreamSkipCases } from './stream-skips.js';

/**
 * What {@link runStoreConformance} runs its cases against.
 *
 * @example
 * ```ts
 * const harness: StoreHarness = { store: createRedisStore({ client }), cleanup: () => client.quit() }
 * ```
 */
export interface StoreHarness {
  store: DedupeStore;
  /**
   * A second store over its own connection (client, pool, file handle) to the same data, standing for another
   * process of a fleet: the concurrency cases of stream cursors spread their calls over both. Without it they use
   * `store` alone.
   */
  peer?: DedupeStore;
  /**
   * Move the store's clock forward. Stores whose clock can be injected (the memory store) provide it so the expiry
   * cases run instantly; without it the suite waits in real time, which is the only honest test when the
   * database's clock decides expiry.
   */
  advanceTimeMs?(ms: number): void | Promise<void>;
  /** Undo what the harness set up: close clients, drop tables. */
  cleanup(): void | Promise<void>;
}

/**
 * Options of {@link runStoreConformance}.
 *
 * @example
 * ```ts
 * runStoreConformance('my store', makeStore, { shortMs: 1_000, skip: process.env.DB_URL ? undefined : 'no DB_URL' })
 * ```
 */
export interface StoreConformanceOptions {
  /** Lease and retention of the expiry cases, in ms. Default 300: short, yet longer than a round trip. */
  shortMs?: number;
  /** Extra real wait past expiry, absorbing timer and clock granularity. Default 150 ms. */
  slackMs?: number;
  /** Concurrent claims of one id in the race case. Default 200. */
  concurrency?: number;
  /** When set, the suite is registered as skipped under this message (e.g. "no Redis server: set KYB_TEST_REDIS_URL"). */
  skip?: string | undefined;
}

const LONG_MS = 60_000;

/**
 * Register the conformance cases for one store with vitest. `makeStore` runs once before the cases (each case uses
 * fresh event ids, so they do not interfere) and `cleanup` once after them.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from '@kyb-webhooks/core'
 * import { runStoreConformance } from '@kyb-webhooks/testing/store-suite'
 *
 * runStoreConformance('memory store', async () => {
 *   let now = 0
 *   return { store: createMemoryStore({ now: () => now }), advanceTimeMs: (ms) => { now += ms }, cleanup() {} }
 * })
 * ```
 */
export function runStoreConformance(
  name: string,
  makeStore: () => Promise<StoreHarness>,
  options: StoreConformanceOptions = {},
): void {
  if (options.skip) {
    describe.skip(`${name}: dedupe store conformance`, () => {
      it(options.skip!, () => {});
    });
    return;
  }
  const shortMs = options.shortMs ?? 300;
  const slackMs = options.slackMs ?? 150;
  const concurrency = options.concurrency ?? 200;

  describe(`${name}: dedupe store conformance`, () => {
    let harness: StoreHarness;
    let store: DedupeStore;
    beforeAll(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterAll(async () => {
      await harness?.cleanup();
    });

    /** Let `ms` pass on the store's clock: instantly when the harness controls it, else for real. */
    async function elapse(ms: number): Promise<void> {
      if (harness.advanceTimeMs) await harness.advanceTimeMs(ms + 1);
      else await new Promise((resolve) => setTimeout(resolve, ms + slackMs));
    }

    // A fake clock is shared: one case moving it would expire another's lease mid-case. With one, the concurrent
    // cases take turns; with real time, each case only waits for its own leases.
    let turn: Promise<unknown> = Promise.resolve();
    function exclusive(fn: () => Promise<void>): Promise<void> {
      if (!harness.advanceTimeMs) return fn();
      const run = turn.then(fn);
      turn = run.catch(() => {});
      return run;
    }

    async function acquire(eventId: string, leaseMs = LONG_MS): Promise<string> {
      const claim = await store.claim(eventId, { leaseMs });
      if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}, got ${claim.status}`);
      return claim.token;
    }

    it('claims a new event: acquired with a token', async () => {
      const claim = await store.claim(ulid(), { leaseMs: LONG_MS });
      expect(claim.status).toBe('acquired');
      expect(claim.status === 'acquired' && claim.token).toMatch(/^\S{16,}$/);
    });

    it('answers in_progress to a second claim while the lease holds', async () => {
      const id = ulid();
      await acquire(id);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
    });

    it('completes with the right token, then answers completed', async () => {
      const id = ulid();
      const token = await acquire(id);
      expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(true);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
      // A completed record is final: neither a second complete nor a release changes it.
      expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(false);
      expect(await store.release(id, token)).toBe(false);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
    });

    it('keeps a lease and a record for the longest duration a receiver accepts (MAX_STORE_DURATION_MS, 100 years)', async () => {
      const id = ulid();
      const token = await acquire(id, MAX_STORE_DURATION_MS);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.complete(id, token, { retainMs: MAX_STORE_DURATION_MS })).toBe(true);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
    });

    it.each([
      ['NaN', Number.NaN],
      ['0', 0],
      ['-5', -5],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['more than 100 years', MAX_STORE_DURATION_MS * 2],
    ])('refuses a lease or a retention of %s with a RangeError and records nothing', async (_what, duration) => {
      const id = ulid();
      // A synchronous store throws, an asynchronous one rejects: both reach the caller as a rejection here.
      await expect(Promise.resolve().then(() => store.claim(id, { leaseMs: duration }))).rejects.toThrow(RangeError);
      const token = await acquire(id);
      await expect(Promise.resolve().then(() => store.complete(id, token, { retainMs: duration }))).rejects.toThrow(
        RangeError,
      );
      // The claim is as it was: still held, and completed by a valid retention.
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(true);
    });

    it('refuses complete and release with a wrong token and leaves the claim as it was', async () => {
      const id = ulid();
      const token = await acquire(id);
      const wrong = token.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      expect(await store.complete(id, wrong, { retainMs: LONG_MS })).toBe(false);
      expect(await store.release(id, wrong)).toBe(false);
      expect(await store.complete(id, '', { retainMs: LONG_MS })).toBe(false);
      expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
      expect(await store.complete(id, token, { retainMs: LONG_MS })).toBe(true);
    });

    it('refuses complete and release of an event that was never claimed', async () => {
      const id = ulid();
      expect(await store.complete(id, 'a'.repeat(32), { retainMs: LONG_MS })).toBe(false);
      expect(await store.release(id, 'a'.repeat(32))).toBe(false);
      expect((await store.claim(id, { leaseMs: LONG_MS })).status).toBe('acquired');
    });

    it('releases with the right token so the retry acquires it with a new token', async () => {
      const id = ulid();
      const first = await acquire(id);
      expect(await store.release(id, first)).toBe(true);
      expect(await store.release(id, first)).toBe(false);
      const second = await acquire(id);
      expect(second).not.toBe(first);
      expect(await store.complete(id, first, { retainMs: LONG_MS })).toBe(false);
      expect(await store.complete(id, second, { retainMs: LONG_MS })).toBe(true);
    });

    it(`lets exactly one of ${concurrency} concurrent claims of one event acquire it`, async () => {
      const id = ulid();
      const claims = await Promise.all(
        Array.from({ length: concurrency }, () => store.claim(id, { leaseMs: LONG_MS })),
      );
      expect(claims.filter((c) => c.status === 'acquired')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'in_progress')).toHaveLength(concurrency - 1);
    });

    // The expiry cases mostly wait for a lease or retention to pass, so they run concurrently, each on its own ids.
    it.concurrent(
      'lets an expired lease (crashed holder) be claimed again; the old token then neither completes nor releases',
      ({ expect }) =>
        exclusive(async () => {
          const id = ulid();
          const crashed = await acquire(id, shortMs);
          await elapse(shortMs);
          const retry = await acquire(id);
          expect(retry).not.toBe(crashed);
          expect(await store.complete(id, crashed, { retainMs: LONG_MS })).toBe(false);
          expect(await store.release(id, crashed)).toBe(false);
          expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'in_progress' });
          expect(await store.complete(id, retry, { retainMs: LONG_MS })).toBe(true);
          expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
        }),
    );

    it.concurrent('refuses complete and release once the lease expired, even before anyone else claims', ({ expect }) =>
      exclusive(async () => {
        const id = ulid();
        const late = await acquire(id, shortMs);
        await elapse(shortMs);
        expect(await store.complete(id, late, { retainMs: LONG_MS })).toBe(false);
        expect(await store.release(id, late)).toBe(false);
        expect((await store.claim(id, { leaseMs: LONG_MS })).status).toBe('acquired');
      }),
    );

    it.concurrent('keeps a completed record for retainMs, then lets the event be claimed again', ({ expect }) =>
      exclusive(async () => {
        const id = ulid();
        const token = await acquire(id);
        expect(await store.complete(id, token, { retainMs: shortMs })).toBe(true);
        expect(await store.claim(id, { leaseMs: LONG_MS })).toEqual({ status: 'completed' });
        await elapse(shortMs);
        expect((await store.claim(id, { leaseMs: LONG_MS })).status).toBe('acquired');
      }),
    );

    it.concurrent('lets exactly one of many concurrent claims take over an expired lease', ({ expect }) =>
      exclusive(async () => {
        const id = ulid();
        await acquire(id, shortMs);
        await elapse(shortMs);
        const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim(id, { leaseMs: LONG_MS })));
        expect(claims.filter((c) => c.status === 'acquired')).toHaveLength(1);
      }),
    );

    const cursorCases = {
      store: () => store,
      peer: () => harness.peer ?? store,
      shortMs,
      afterElapsing: (ms: number, before: () => Promise<void>, after: () => Promise<void>) =>
        exclusive(async () => {
          await before();
          await elapse(ms);
          await after();
        }),
    };
    registerLeaseExtensionCases(cursorCases);
    registerStreamCursorCases(cursorCases);
    registerStreamListingCases(cursorCases);
    registerStreamSkipCases(cursorCases);

    it('never confuses different events: case, length, shared prefixes, odd characters', async () => {
      const base = ulid();
      const long = `${base}-${'x'.repeat(255 - base.length - 1)}`; // 255 characters
      const ids = [
        base,
        base.toLowerCase(),
        long.slice(0, -1) + 'y',
        long,
        long.toUpperCase(),
        `${base}:`,
        `{${base}}`,
        `${base}}{`,
        `${base} é ✓`,
        `${base} `,
      ];
      expect(new Set(ids).size).toBe(ids.length);
      const tokens: string[] = [];
      for (const id of ids) tokens.push(await acquire(id));
      expect(await store.complete(ids[0]!, tokens[0]!, { retainMs: LONG_MS })).toBe(true);
      expect(await store.release(ids[3]!, tokens[3]!)).toBe(true);
      // A token only ever works for the event it was issued for.
      expect(await store.complete(ids[2]!, tokens[4]!, { retainMs: LONG_MS })).toBe(false);
      const states = await Promise.all(ids.map((id) => store.claim(id, { leaseMs: LONG_MS })));
      expect(states.map((s) => s.status)).toEqual([
        'completed',
        'in_progress',
        'in_progress',
        'acquired',
        'in_progress',
        'in_progress',
        'in_progress',
        'in_progress',
        'in_progress',
        'in_progress',
      ]);
    });
  });
}
export { expectConfigInvalid } from '../config-invalid.js';
