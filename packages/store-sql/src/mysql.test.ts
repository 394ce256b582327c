import { readFileSync } from 'node:fs';
import { createReceiver, streamOrdering } from '@kyb-webhooks/core';
import { createTestSigner, testStream, ulid } from '@kyb-webhooks/testing';
import { runStoreConformance } from '@kyb-webhooks/testing/store-suite';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createMySqlStore, mysqlSchema, mysqlSchemaFile } from './mysql.js';
import type { PurgeOptions } from './sql-store.js';
import {
  countQueries,
  sleep,
  testTable,
  withSkewedAppClock,
  expectPurgeCompleted,
  expectPurgeCursors,
  expectPurgeInBatches,
} from './test-helpers.js';

const mysqlServer = testService('mysql');

runStoreConformance(
  'mysql store (MariaDB)',
  async () => {
    const pool = mysql.createPool({ uri: mysqlServer.url!, connectionLimit: 10 });
    const other = mysql.createPool({ uri: mysqlServer.url!, connectionLimit: 10 }); // another process of the fleet
    const table = testTable();
    const store = createMySqlStore({ pool, table });
    await store.ensureSchema();
    return {
      store,
      peer: createMySqlStore({ pool: other, table }),
      async cleanup() {
        await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_streams\``);
        await pool.end();
        await other.end();
      },
    };
  },
  { skip: mysqlServer.skipReason },
);

describe.skipIf(!mysqlServer.url)(`mysql store specifics ${mysqlServer.skipReason ?? ''}`, () => {
  let pool: mysql.Pool;
  const table = testTable();
  const databases: string[] = [];
  beforeAll(async () => {
    pool = mysql.createPool({ uri: mysqlServer.url!, connectionLimit: 10 });
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_streams\``);
    for (const database of databases) await pool.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await pool.end();
  });

  it('creates the schema idempotently', async () => {
    const store = createMySqlStore({ pool, table });
    await Promise.all([store.ensureSchema(), store.ensureSchema()]);
    await store.ensureSchema();
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
  });

  it('ships sql/mysql.sql, which creates the same tables (events and stream cursors) as ensureSchema', async () => {
    const file = readFileSync(new URL('../sql/mysql.sql', import.meta.url), 'utf8');
    expect(file).toBe(mysqlSchemaFile());
    const [byFile, byEnsure] = [testTable(), testTable()];
    databases.push(byFile, byEnsure);
    await pool.query(`CREATE DATABASE \`${byFile}\``);
    await pool.query(`CREATE DATABASE \`${byEnsure}\``);
    const connection = await pool.getConnection();
    try {
      await connection.query(`USE \`${byFile}\``);
      // One statement per query, as a pool without multipleStatements (mysql2's default) requires.
      for (const statement of file.split(/;\n/)) if (statement.trim() !== '') await connection.query(statement);
    } finally {
      connection.destroy(); // it has another default database now: do not hand it back to the pool
    }
    await createMySqlStore({ pool, table: `${byEnsure}.kyb_webhook_events` }).ensureSchema();
    const show = async (database: string, table = 'kyb_webhook_events') =>
      ((await pool.query(`SHOW CREATE TABLE \`${database}\`.${table}`)) as [Record<string, string>[], unknown])[0][0]![
        'Create Table'
      ];
    expect(await show(byFile)).toBe(await show(byEnsure));
    expect(await show(byFile)).toMatch(/`event_id` varbinary\(1020\) NOT NULL/);
    expect(await show(byFile, 'kyb_webhook_events_streams')).toBe(await show(byEnsure, 'kyb_webhook_events_streams'));
    expect(await show(byFile, 'kyb_webhook_events_streams')).toMatch(/`stream_id` varbinary\(1020\) NOT NULL/);
    expect(await show(byFile, 'kyb_webhook_events_streams')).toMatch(
      /KEY `kyb_webhook_events_activity_idx` \(`active_at`,`stream_id`\)/,
    );
    const store = createMySqlStore({ pool, table: `${byFile}.kyb_webhook_events` });
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
  });

  it('uses exactly two round trips per event on the happy path (claim, complete), one per duplicate', async () => {
    const { db, count } = countQueries(pool);
    const store = createMySqlStore({ pool: db, table });
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    expect(count()).toBe(2);
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
    const open = ulid();
    await store.claim(open, { leaseMs: 300 });
    expect(await store.claim(open, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
    await sleep(400);
    expect((await store.claim(open, { leaseMs: 5_000 })).status).toBe('acquired'); // taking over an expired lease
    expect(count()).toBe(6);
  });

  it('reports a fresh insert correctly on a connection whose previous statement set LAST_INSERT_ID', async () => {
    const connection = await pool.getConnection();
    try {
      const store = createMySqlStore({ pool: connection, table });
      const id = ulid();
      await store.claim(id, { leaseMs: 5_000 });
      expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' }); // sets LAST_INSERT_ID(2)
      expect((await store.claim(ulid(), { leaseMs: 5_000 })).status).toBe('acquired');
    } finally {
      connection.release();
    }
  });

  it('falls back to comparing tokens when the OK packet carries no code (e.g. a proxy drops insertId)', async () => {
    const stripped = {
      async query(sql: string, values?: unknown[]) {
        const result = (await pool.query(sql, values)) as [unknown, unknown];
        if (sql.startsWith('INSERT')) (result[0] as { insertId: number }).insertId = 99;
        return result;
      },
    };
    const store = createMySqlStore({ pool: stripped, table });
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    expect(claim.status).toBe('acquired');
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
  });

  it('lets the database clock decide the lease, whatever the application clock says', async () => {
    const store = createMySqlStore({ pool, table });
    for (const skew of [86_400_000, -86_400_000]) {
      const id = ulid();
      await withSkewedAppClock(skew, async () => {
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
        expect(await store.claim(id, { leaseMs: 400 })).toEqual({ status: 'in_progress' });
        const [rows] = (await pool.query(
          `SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) / 1000 AS ms FROM \`${table}\` WHERE event_id = ?`,
          [Buffer.from(id)],
        )) as [{ ms: string }[], unknown];
        expect(Number(rows[0]!.ms)).toBeGreaterThan(0);
        expect(Number(rows[0]!.ms)).toBeLessThanOrEqual(400);
        await sleep(550);
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
      });
    }
  });

  it('ignores the session time zone, which may differ between the connections of a pool', async () => {
    const connection = await pool.getConnection();
    try {
      await connection.query(`SET time_zone = '+13:00'`);
      const store = createMySqlStore({ pool: connection, table });
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      await connection.query(`SET time_zone = '-11:00'`);
      expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
      expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    } finally {
      connection.destroy();
    }
  });

  it('purges completed records past their retention, and with olderThanMs those completed longer ago', async () => {
    const purgeTable = testTable();
    const store = createMySqlStore({ pool, table: purgeTable });
    await store.ensureSchema();
    try {
      const ids = async () =>
        (
          (await pool.query(`SELECT CAST(event_id AS CHAR) AS id FROM \`${purgeTable}\` ORDER BY 1`)) as [
            { id: string }[],
            unknown,
          ]
        )[0].map((r) => r.id);
      await expectPurgeCompleted(store, ids);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\``);
    }
  });

  it('purges in batches of batchSize rows, each chosen by a read and deleted by key, and refuses a batchSize or pauseRatio out of range', async () => {
    const purgeTable = testTable();
    const { db, count } = countQueries(pool);
    const store = createMySqlStore({ pool: db, table: purgeTable });
    await store.ensureSchema();
    try {
      const ids = async () =>
        (
          (await pool.query(`SELECT CAST(event_id AS CHAR) AS id FROM \`${purgeTable}\` ORDER BY 1`)) as [
            { id: string }[],
            unknown,
          ]
        )[0].map((r) => r.id);
      // A SELECT and a DELETE per batch that found rows (10, 10, 5 records; 4 cursors), a SELECT for the skips (none).
      await expectPurgeInBatches(store, ids, count, 3 * 2 + 1 * 2 + 1);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\`, \`${purgeTable}_skips\``);
    }
  });

  /**
   * `expired` records expired an hour ago, and a lease a claim has just taken: the first live row past them in
   * expires_at order. While another transaction holds that lease (as a complete() in progress does), the purge takes
   * every expired record without waiting for it.
   */
  async function expectPurgePastHeldLease(expired: number, purge: PurgeOptions): Promise<void> {
    const purgeTable = testTable();
    // One connection whose lock waits give up after 1 s, not InnoDB's 50: a purge that waited fails at once.
    const connection = await mysql.createConnection({ uri: mysqlServer.url! });
    await connection.query('SET SESSION innodb_lock_wait_timeout = 1');
    const store = createMySqlStore({ pool: connection, table: purgeTable });
    await store.ensureSchema();
    const holder = await pool.getConnection();
    try {
      const ids = Array.from({ length: expired }, () => ulid());
      const ago = (hours: number) => `UTC_TIMESTAMP(3) - INTERVAL ${hours} HOUR`;
      await pool.query(
        `INSERT INTO \`${purgeTable}\` (event_id, state, token, expires_at, updated_at) VALUES ${ids
          .map(() => `(?, 'completed', 'token', ${ago(1)}, ${ago(2)})`)
          .join(', ')}`,
        ids.map((id) => Buffer.from(id)),
      );
      const lease = ulid();
      expect(await store.claim(lease, { leaseMs: 60_000 })).toMatchObject({ status: 'acquired' });
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM \`${purgeTable}\` WHERE event_id = ? FOR UPDATE`, [Buffer.from(lease)]);
      expect(await store.purgeCompleted(purge)).toBe(expired);
      await holder.query('ROLLBACK');
      const [rows] = (await pool.query(`SELECT CAST(event_id AS CHAR) AS id FROM \`${purgeTable}\``)) as [
        { id: string }[],
        unknown,
      ];
      expect(rows.map((r) => r.id)).toEqual([lease]);
    } finally {
      // A test that failed mid-way leaves the lock held: end it, or the DROP below waits for its metadata lock.
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      await connection.end();
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\`, \`${purgeTable}_skips\``);
    }
  }

  it('never waits on a live row another transaction holds past the expired ones, as a complete() in progress holds its lease', async () => {
    // Batches of 2: the last one (1 row) is the one whose scan used to reach the held lease and wait for it.
    await expectPurgePastHeldLease(3, { batchSize: 2 });
  });

  it('never names so many keys in one DELETE that MariaDB scans, and locks, the whole table (batches of 1,000 and more)', async () => {
    // 1,000 values in an IN list or more become a join that reads every row, the held lease included.
    await expectPurgePastHeldLease(2_500, { batchSize: 1_000 });
    await expectPurgePastHeldLease(2_500, { batchSize: 2_000 });
  });

  it('leaves an expired record a claim takes over between the batch choosing it and deleting it, and goes on to the next batch', async () => {
    const purgeTable = testTable();
    const owner = createMySqlStore({ pool, table: purgeTable });
    await owner.ensureSchema();
    const expired = Array.from({ length: 5 }, () => ulid()).sort();
    for (const id of expired) {
      const claim = await owner.claim(id, { leaseMs: 5_000 });
      if (claim.status === 'acquired') await owner.complete(id, claim.token, { retainMs: 100 });
    }
    await sleep(300);
    // The purge's pool: before its first DELETE runs, a redelivery claims one of the rows the batch chose.
    let takenOver: string | undefined;
    const purging = {
      async query(sql: string, values?: unknown[]) {
        if (takenOver === undefined && sql.startsWith('DELETE')) {
          // The DELETE names the rows the batch chose as hex literals, X'…'.
          takenOver = Buffer.from(/X'([0-9A-F]+)'/.exec(sql)![1]!, 'hex').toString('utf8');
          expect(await owner.claim(takenOver, { leaseMs: 60_000 })).toMatchObject({ status: 'acquired' });
        }
        return pool.query(sql, values);
      },
    };
    try {
      // Batches of 2: the first chose 2 and deleted 1, which must not end the purge.
      expect(await createMySqlStore({ pool: purging, table: purgeTable }).purgeCompleted({ batchSize: 2 })).toBe(4);
      const [rows] = (await pool.query(`SELECT CAST(event_id AS CHAR) AS id, state FROM \`${purgeTable}\``)) as [
        { id: string; state: string }[],
        unknown,
      ];
      expect(rows).toEqual([{ id: takenOver, state: 'in_progress' }]);
      expect(await owner.claim(takenOver!, { leaseMs: 1_000 })).toEqual({ status: 'in_progress' });
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\`, \`${purgeTable}_skips\``);
    }
  });

  it('purges expired skips by their two-column key, a batch at a time, and keeps the live ones', async () => {
    const purgeTable = testTable();
    const store = createMySqlStore({ pool, table: purgeTable });
    await store.ensureSchema();
    try {
      const [short, long] = [`req_${ulid()}`, `req_${ulid()}`];
      for (let seq = 0; seq < 3; seq++) {
        expect(await store.skipSeq!(short, seq, { reason: `gone ${seq}`, retainMs: 100 })).toBe(true);
      }
      expect(await store.skipSeq!(long, 0, { reason: 'kept', retainMs: 60_000 })).toBe(true);
      await sleep(300);
      // The short stream's cursor and its three skips (batches of 2, then 1); the long stream's cursor and skip stay.
      expect(await store.purgeCompleted({ batchSize: 2 })).toBe(1 + 3);
      const [rows] = (await pool.query(
        `SELECT CAST(stream_id AS CHAR) AS id, seq FROM \`${purgeTable}_skips\` ORDER BY 1, 2`,
      )) as [{ id: string; seq: number }[], unknown];
      expect(rows).toEqual([{ id: long, seq: 0 }]);
      expect(await store.listSkips!(long)).toEqual([expect.objectContaining({ seq: 0, reason: 'kept' })]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\`, \`${purgeTable}_skips\``);
    }
  });

  it('writes into its DELETE only keys the database answered as hex text, and deletes nothing past one that is not', async () => {
    const purgeTable = testTable();
    const owner = createMySqlStore({ pool, table: purgeTable });
    await owner.ensureSchema();
    try {
      const expired = ulid();
      const claim = await owner.claim(expired, { leaseMs: 5_000 });
      if (claim.status === 'acquired') await owner.complete(expired, claim.token, { retainMs: 100 });
      await sleep(300);
      // A pool (a proxy, a driver option) that answers the purge's read with something other than HEX() text.
      const odd = {
        query(sql: string, values?: unknown[]) {
          if (sql.startsWith('SELECT HEX('))
            return Promise.resolve([[{ k0: "00' OR 1=1 -- " }], []] as [unknown, unknown]);
          return pool.query(sql, values);
        },
      };
      await expect(createMySqlStore({ pool: odd, table: purgeTable }).purgeCompleted()).rejects.toThrow(
        'purgeCompleted: the database answered a key that is not HEX() text; nothing more was deleted.',
      );
      const [rows] = (await pool.query(`SELECT CAST(event_id AS CHAR) AS id FROM \`${purgeTable}\``)) as [
        { id: string }[],
        unknown,
      ];
      expect(rows).toEqual([{ id: expired }]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\`, \`${purgeTable}_skips\``);
    }
  });

  it('purges stream cursors past their retention, and with olderThanMs those not advanced for that long', async () => {
    const purgeTable = testTable();
    const store = createMySqlStore({ pool, table: purgeTable });
    await store.ensureSchema();
    try {
      const streams = async () =>
        (
          (await pool.query(`SELECT CAST(stream_id AS CHAR) AS id FROM \`${purgeTable}_streams\` ORDER BY 1`)) as [
            { id: string }[],
            unknown,
          ]
        )[0].map((r) => r.id);
      await expectPurgeCursors(store, streams);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${purgeTable}\`, \`${purgeTable}_streams\``);
    }
  });

  it('keeps purging events on a schema migrated by hand before stream cursors existed (no cursors table)', async () => {
    const oldTable = testTable();
    await pool.query(mysqlSchema(oldTable).split(/;\n/)[0]!);
    try {
      const store = createMySqlStore({ pool, table: oldTable });
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 100 }))).toBe(true);
      await sleep(200);
      expect(await store.purgeCompleted()).toBe(1);
      expect(await store.purgeCompleted({ olderThanMs: 100 })).toBe(0);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS \`${oldTable}\``);
    }
  });

  it('completes in order in one round trip on an existing stream (two for its first event when getCursor was not told firstEvent, as under ordering detect), and refuses in two', async () => {
    const { db, count } = countQueries(pool);
    const store = createMySqlStore({ pool: db, table });
    const streamId = `req_${ulid()}`;
    const step = async (seq: number) => {
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
      const before = count();
      const outcome = await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId, seq, firstSeq: 1 });
      return { outcome, trips: count() - before };
    };
    expect(await step(1)).toEqual({ outcome: 'completed', trips: 2 });
    expect(await step(2)).toEqual({ outcome: 'completed', trips: 1 });
    expect(await step(3)).toEqual({ outcome: 'completed', trips: 1 });
    expect(await step(7)).toEqual({ outcome: 'cursor_moved', trips: 2 });
  });

  it("reads the cursor and completes a stream's first event in two round trips when getCursor is told firstEvent (one more than ordering off)", async () => {
    const { db, count } = countQueries(pool);
    const store = createMySqlStore({ pool: db, table });
    const streamId = `req_${ulid()}`;
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
    const before = count();
    expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
    expect(await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId, seq: 1, firstSeq: 1 })).toBe(
      'completed',
    );
    expect(count() - before).toBe(2);
    expect(await store.getCursor(streamId)).toBe(1);
  });

  // Issue 12's target: enforce adds at most one round trip per event, the first of a stream included; detect reads no
  // cursor, so only its first event pays the placeholder row.
  it.for([
    { mode: 'off', queries: [2, 2] },
    { mode: 'enforce', queries: [3, 3] },
    { mode: 'detect', queries: [3, 2] },
  ] as const)(
    "a receiver with ordering $mode makes $queries.0 queries for a stream's first event and $queries.1 for the next",
    async ({ mode, queries }) => {
      const now = Date.now();
      const signer = await createTestSigner({ now, secrets: { '1': 'mysql-ordering-secret' } });
      const { db, count } = countQueries(pool);
      const store = createMySqlStore({ pool: db, table });
      await store.ensureSchema();
      const ordering = streamOrdering({ mode, fetchEventsAfter: async function* () {} });
      const receiver = createReceiver({
        secrets: { '1': 'mysql-ordering-secret' },
        attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
        now: () => now,
        store,
        ordering,
      });
      const perEvent: number[] = [];
      for (const event of testStream(['kyb.data_request.pending_approval', 'kyb.data_request.pending_approval'])) {
        const { headers, body } = await signer.sign(await signer.withAttestation(event));
        const before = count();
        expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
        perEvent.push(count() - before);
      }
      expect(perEvent).toEqual(queries);
    },
  );

  it("remembers at most 1024 streams told to getCursor: the oldest one's first event pays the placeholder again, and completes", async () => {
    const { db, count } = countQueries(pool);
    const store = createMySqlStore({ pool: db, table });
    const oldest = `req_${ulid()}`;
    expect(await store.getCursor(oldest, { firstEvent: true })).toBeNull();
    const others = Array.from({ length: 1024 }, () => `req_${ulid()}`);
    await Promise.all(others.map((streamId) => store.getCursor(streamId, { firstEvent: true })));
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
    const before = count();
    expect(
      await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId: oldest, seq: 0, firstSeq: 0 }),
    ).toBe('completed');
    expect(count() - before).toBe(2);
  });

  it('completes a first event told to getCursor even when a purge deleted the expired placeholder row in between', async () => {
    const store = createMySqlStore({ pool, table });
    const streamId = `req_${ulid()}`;
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
    expect(await store.getCursor(streamId, { firstEvent: true })).toBeNull();
    const placeholder = async () =>
      (
        (await pool.query(`SELECT 1 FROM \`${table}_streams\` WHERE stream_id = ?`, [Buffer.from(streamId)])) as [
          unknown[],
          unknown,
        ]
      )[0].length;
    expect(await placeholder()).toBe(1);
    await store.purgeCompleted(); // the placeholder expired as it was inserted: it reads as no cursor, and goes
    expect(await placeholder()).toBe(0);
    expect(await store.completeInOrder(id, claim.token, { retainMs: 5_000, streamId, seq: 1, firstSeq: 1 })).toBe(
      'completed',
    );
    expect(await store.getCursor(streamId)).toBe(1);
  });

  it('refuses an event id longer than the key instead of truncating it into another event', async () => {
    const store = createMySqlStore({ pool, table });
    await expect(store.claim('x'.repeat(256), { leaseMs: 1_000 })).rejects.toThrow(RangeError);
  });

  it('propagates database errors as thrown errors (the receiver answers 503 store_unavailable)', async () => {
    const store = createMySqlStore({ pool, table: 'kyb_no_such_table' });
    await expect(store.claim(ulid(), { leaseMs: 1_000 })).rejects.toThrow(/kyb_no_such_table/);
  });

  it('runs a complete() or release() chosen as a deadlock victim again, and answers as the run that got through', async () => {
    // InnoDB rolls a deadlock victim's statement back whole; here the server is not even sent the first run.
    const victims = new Set<string>();
    const deadlocking = {
      query(sql: string, values?: unknown[]) {
        const kind = sql.split(' ')[0]!;
        if ((kind === 'UPDATE' || kind === 'DELETE') && !victims.has(kind)) {
          victims.add(kind);
          return Promise.reject(Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213 }));
        }
        return pool.query(sql, values);
      },
    };
    const store = createMySqlStore({ pool: deadlocking, table });
    const [completed, released] = [ulid(), ulid()];
    const first = await store.claim(completed, { leaseMs: 5_000 });
    const second = await store.claim(released, { leaseMs: 5_000 });
    if (first.status !== 'acquired' || second.status !== 'acquired') throw new Error('expected fresh claims');
    expect(await store.complete(completed, first.token, { retainMs: 60_000 })).toBe(true);
    expect(await store.release(released, second.token)).toBe(true);
    expect([...victims]).toEqual(['UPDATE', 'DELETE']);
    expect(await store.claim(completed, { leaseMs: 1_000 })).toEqual({ status: 'completed' });
    expect(await store.claim(released, { leaseMs: 1_000 })).toMatchObject({ status: 'acquired' });
  });

  it('runs a completeInOrder() or skipSeq() chosen as a deadlock victim again, from its first statement', async () => {
    // Each distinct UPDATE is refused as a victim on its first run, after the statements before it got through.
    const refused = new Set<string>();
    const deadlocking = {
      query(sql: string, values?: unknown[]) {
        if (sql.startsWith('UPDATE') && !refused.has(sql)) {
          refused.add(sql);
          return Promise.reject(Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213 }));
        }
        return pool.query(sql, values);
      },
    };
    const store = createMySqlStore({ pool: deadlocking, table });
    const [streamId, id] = [`deadlock-${ulid()}`, ulid()];
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status !== 'acquired') throw new Error('expected a fresh claim');
    const options = { retainMs: 5_000, streamId, seq: 1, firstSeq: 1 as const };
    expect(await store.completeInOrder(id, claim.token, options)).toBe('completed');
    expect(await store.skipSeq!(streamId, 2, { reason: 'gone', retainMs: 5_000 })).toBe(true);
    expect(refused.size).toBe(2);
    expect(await store.getCursor(streamId)).toBe(2);
    expect(await store.claim(id, { leaseMs: 1_000 })).toEqual({ status: 'completed' });
    expect((await store.listSkips!(streamId)).map((skip) => [skip.seq, skip.reason])).toEqual([[2, 'gone']]);
  });

  it('quotes a validated table name into its SQL', () => {
    expect(mysqlSchema('audit.events')).toContain('CREATE TABLE IF NOT EXISTS `audit`.`events`');
    expect(() => createMySqlStore({ pool, table: 'events`; DROP TABLE users; --' })).toThrow(/identifier/);
  });
});
