import { readFileSync } from 'node:fs';
import { ulid } from '@kyb-webhooks/testing';
import { runStoreConformance } from '@kyb-webhooks/testing/store-suite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createPostgresStore, postgresSchema, postgresSchemaFile } from './postgres.js';
import {
  countQueries,
  sleep,
  testTable,
  withSkewedAppClock,
  expectPurgeCompleted,
  expectPurgeCursors,
  expectPurgeInBatches,
} from './test-helpers.js';

const postgres = testService('postgres');

runStoreConformance(
  'postgres store',
  async () => {
    const pool = new pg.Pool({ connectionString: postgres.url!, max: 10 });
    const other = new pg.Pool({ connectionString: postgres.url!, max: 10 }); // another process of the fleet
    const table = testTable();
    const store = createPostgresStore({ pool, table });
    await store.ensureSchema();
    return {
      store,
      peer: createPostgresStore({ pool: other, table }),
      async cleanup() {
        await pool.query(`DROP TABLE IF EXISTS "${table}", "${table}_streams"`);
        await pool.end();
        await other.end();
      },
    };
  },
  { skip: postgres.skipReason },
);

describe.skipIf(!postgres.url)(`postgres store specifics ${postgres.skipReason ?? ''}`, () => {
  let pool: pg.Pool;
  const table = testTable();
  const schemas: string[] = [];
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: postgres.url!, max: 10 });
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS "${table}", "${table}_streams"`);
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('creates the schema idempotently, also when several processes do it at once', async () => {
    const store = createPostgresStore({ pool, table });
    await Promise.all([store.ensureSchema(), store.ensureSchema(), store.ensureSchema()]);
    await store.ensureSchema();
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
  });

  it('ships sql/postgres.sql, which creates the same tables (events, stream cursors and skips) as ensureSchema', async () => {
    const file = readFileSync(new URL('../sql/postgres.sql', import.meta.url), 'utf8');
    expect(file).toBe(postgresSchemaFile());
    const [byFile, byEnsure] = [testTable(), testTable()];
    schemas.push(byFile, byEnsure);
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA "${byFile}"; CREATE SCHEMA "${byEnsure}"; SET search_path TO "${byFile}"`);
      await client.query(file);
      await client.query('RESET search_path');
    } finally {
      client.release();
    }
    await createPostgresStore({ pool, table: `${byEnsure}.kyb_webhook_events` }).ensureSchema();
    const shape = async (schema: string) => ({
      columns: (
        await pool.query(
          `SELECT table_name, column_name, data_type, character_maximum_length, is_nullable FROM information_schema.columns
           WHERE table_schema = $1 AND table_name IN ('kyb_webhook_events', 'kyb_webhook_events_streams', 'kyb_webhook_events_skips')
           ORDER BY table_name, ordinal_position`,
          [schema],
        )
      ).rows,
      indexes: (
        await pool.query(
          `SELECT indexname, replace(indexdef, $1, 'S') AS def FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`,
          [schema],
        )
      ).rows,
    });
    const [a, b] = [await shape(byFile), await shape(byEnsure)];
    expect(a.columns).toHaveLength(16);
    // Events: key and expiry; stream cursors: key and the (active_at, stream_id) index of listStreams; skips: key.
    expect(a.indexes).toHaveLength(5);
    expect(a.indexes.map((index: { def: string }) => index.def)).toContainEqual(
      expect.stringMatching(/\(active_at, stream_id\)$/),
    );
    expect(a).toEqual(b);
    const store = createPostgresStore({ pool, table: `${byFile}.kyb_webhook_events` });
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
  });

  it('uses exactly two round trips per event on the happy path (claim, complete), one per duplicate', async () => {
    const { db, count } = countQueries(pool);
    const store = createPostgresStore({ pool: db, table });
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    expect(count()).toBe(2);
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
    expect(count()).toBe(3);
  });

  it('sends named prepared statements by default, and plain ones with preparedStatements: false (PgBouncer)', async () => {
    const sent: unknown[] = [];
    const spy = {
      query: (query: unknown, values?: unknown[]) => (sent.push(query), pool.query(query as string, values)),
    };
    for (const preparedStatements of [true, false]) {
      sent.length = 0;
      const store = createPostgresStore({ pool: spy as never, table, preparedStatements });
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
      expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
      const names = sent.map((query) => (typeof query === 'string' ? undefined : (query as { name?: string }).name));
      if (preparedStatements) {
        expect(names).toEqual([
          expect.stringMatching(/^kyb_claim_[0-9a-f]{8}$/),
          expect.stringMatching(/^kyb_complete_/),
          names[0],
        ]);
      } else {
        expect(names).toEqual([undefined, undefined, undefined]);
      }
    }
  });

  it('works on a single pg.Client as well as a pool', async () => {
    const client = new pg.Client({ connectionString: postgres.url! });
    await client.connect();
    try {
      const store = createPostgresStore({ client, table });
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
      expect(claim.status === 'acquired' && (await store.release(id, claim.token))).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('lets the database clock decide the lease, whatever the application clock says', async () => {
    const store = createPostgresStore({ pool, table });
    for (const skew of [86_400_000, -86_400_000]) {
      const id = ulid();
      await withSkewedAppClock(skew, async () => {
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
        expect(await store.claim(id, { leaseMs: 400 })).toEqual({ status: 'in_progress' });
        const { rows } = await pool.query(
          `SELECT extract(epoch FROM expires_at - statement_timestamp()) * 1000 AS ms FROM "${table}" WHERE event_id = $1`,
          [id],
        );
        expect(Number(rows[0].ms)).toBeGreaterThan(0);
        expect(Number(rows[0].ms)).toBeLessThanOrEqual(400);
        await sleep(550);
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
      });
    }
  });

  it('purges completed records past their retention, and with olderThanMs those completed longer ago', async () => {
    const purgeTable = testTable();
    const store = createPostgresStore({ pool, table: `public.${purgeTable}` });
    await store.ensureSchema();
    try {
      const ids = async () =>
        (await pool.query(`SELECT event_id FROM "${purgeTable}" ORDER BY 1`)).rows.map((r) => r.event_id);
      await expectPurgeCompleted(store, ids);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${purgeTable}", "${purgeTable}_streams"`);
    }
  });

  it('purges in batches of batchSize rows, one DELETE each, and refuses a batchSize or pauseRatio out of range', async () => {
    const purgeTable = testTable();
    const { db, count } = countQueries(pool);
    const store = createPostgresStore({ pool: db, table: purgeTable });
    await store.ensureSchema();
    try {
      const ids = async () =>
        (await pool.query(`SELECT event_id FROM "${purgeTable}" ORDER BY 1`)).rows.map((r) => r.event_id);
      await expectPurgeInBatches(store, ids, count);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${purgeTable}", "${purgeTable}_streams", "${purgeTable}_skips"`);
    }
  });

  it('never waits on a row another transaction holds: the purge skips it, and a later purge takes it', async () => {
    const purgeTable = testTable();
    const store = createPostgresStore({ pool, table: purgeTable });
    await store.ensureSchema();
    const holder = await pool.connect();
    try {
      const [held, free] = [ulid(), ulid()];
      for (const id of [held, free]) {
        const claim = await store.claim(id, { leaseMs: 5_000 });
        if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs: 100 });
      }
      await sleep(300);
      // A transaction holding the expired row, as a claim taking it over holds it until it commits.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${purgeTable}" WHERE event_id = $1 FOR UPDATE`, [held]);
      expect(await store.purgeCompleted()).toBe(1);
      await holder.query('ROLLBACK');
      expect(await store.purgeCompleted()).toBe(1);
    } finally {
      holder.release();
      await pool.query(`DROP TABLE IF EXISTS "${purgeTable}", "${purgeTable}_streams", "${purgeTable}_skips"`);
    }
  });

  it('purges stream cursors past their retention, and with olderThanMs those not advanced for that long', async () => {
    const purgeTable = testTable();
    const store = createPostgresStore({ pool, table: purgeTable });
    await store.ensureSchema();
    try {
      const streams = async () =>
        (await pool.query(`SELECT stream_id FROM "${purgeTable}_streams" ORDER BY 1`)).rows.map((r) => r.stream_id);
      await expectPurgeCursors(store, streams);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${purgeTable}", "${purgeTable}_streams"`);
    }
  });

  it('keeps purging events on a schema migrated by hand before stream cursors existed (no cursors table)', async () => {
    const oldTable = testTable();
    await pool.query(
      postgresSchema(oldTable).split('CREATE TABLE IF NOT EXISTS').slice(0, 2).join('CREATE TABLE IF NOT EXISTS'),
    );
    try {
      const store = createPostgresStore({ pool, table: oldTable });
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 100 }))).toBe(true);
      await sleep(200);
      expect(await store.purgeCompleted()).toBe(1);
      expect(await store.purgeCompleted({ olderThanMs: 100 })).toBe(0);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${oldTable}"`);
    }
  });

  it('completes in order in exactly one round trip, for a new stream and an existing one, and refuses in one', async () => {
    const { db, count } = countQueries(pool);
    const store = createPostgresStore({ pool: db, table });
    const streamId = `req_${ulid()}`;
    for (const seq of [1, 2]) {
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      const before = count();
      expect(
        claim.status === 'acquired' &&
          (await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId, seq, firstSeq: 1 })),
      ).toBe('completed');
      expect(count() - before).toBe(1);
    }
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    const before = count();
    expect(
      claim.status === 'acquired' &&
        (await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId, seq: 5, firstSeq: 1 })),
    ).toBe('cursor_moved');
    expect(count() - before).toBe(1);
  });

  it('propagates database errors as thrown errors (the receiver answers 503 store_unavailable)', async () => {
    const store = createPostgresStore({ pool, table: 'kyb_no_such_table' });
    await expect(store.claim(ulid(), { leaseMs: 1_000 })).rejects.toThrow(/kyb_no_such_table/);
  });

  it('quotes a validated table name into its SQL', () => {
    expect(postgresSchema('audit.events')).toContain('CREATE TABLE IF NOT EXISTS "audit"."events"');
    expect(() => createPostgresStore({ pool, table: 'events"; DROP TABLE users; --' })).toThrow(/identifier/);
  });
});
