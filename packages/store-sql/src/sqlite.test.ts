import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, testStream, ulid } from '@kyb-webhooks/testing';
import { runStoreConformance } from '@kyb-webhooks/testing/store-suite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, sqliteSchema, sqliteSchemaFile } from './sqlite.js';
import {
  sleep,
  withSkewedAppClock,
  expectPurgeCompleted,
  expectPurgeCursors,
  expectPurgeInBatches,
} from './test-helpers.js';

// SQLite needs no server: every store gets a file in a temporary directory.
const dir = mkdtempSync(join(tmpdir(), 'kyb-sqlite-'));
let files = 0;
const tempFile = (): string => join(dir, `store-${++files}.sqlite`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runStoreConformance('sqlite store (filename)', async () => {
  const filename = tempFile();
  const store = createSqliteStore({ filename });
  await store.ensureSchema();
  const peer = createSqliteStore({ filename }); // its own connection to the file, as another process would have
  return { store, peer, cleanup: async () => (await store.close(), await peer.close()) };
});

runStoreConformance('sqlite store (database)', async () => {
  const database = new Database(tempFile());
  const store = createSqliteStore({ database, table: 'main.kyb_events' });
  await store.ensureSchema();
  return { store, cleanup: () => void database.close() };
});

// An application may read its own tables as BigInts; the store's reads must not depend on that setting.
runStoreConformance('sqlite store (database in safe-integers mode)', async () => {
  const database = new Database(tempFile());
  database.defaultSafeIntegers(true);
  const store = createSqliteStore({ database });
  await store.ensureSchema();
  return { store, cleanup: () => void database.close() };
});

describe('sqlite store specifics', () => {
  it('creates the schema idempotently', async () => {
    const store = createSqliteStore({ filename: tempFile() });
    await store.ensureSchema();
    await store.ensureSchema();
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
    await store.close();
  });

  it('ships sql/sqlite.sql, which creates the same tables (events, stream cursors and skips) as ensureSchema', async () => {
    const file = readFileSync(new URL('../sql/sqlite.sql', import.meta.url), 'utf8');
    expect(file).toBe(sqliteSchemaFile());
    const [byFile, byEnsure] = [new Database(tempFile()), new Database(tempFile())];
    byFile.exec(file);
    await createSqliteStore({ database: byEnsure }).ensureSchema();
    const shape = (db: Database.Database) =>
      db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    // Three tables (events, cursors, skips), the events' expiry index and the cursors' activity index (listStreams).
    expect(shape(byFile)).toHaveLength(5);
    expect(shape(byFile)).toEqual(shape(byEnsure));
    expect((await createSqliteStore({ database: byFile }).claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
    byFile.close();
    byEnsure.close();
  });

  it('shares one file between stores (processes) without double claims', async () => {
    const filename = tempFile();
    const stores = [createSqliteStore({ filename }), createSqliteStore({ filename })];
    await stores[0]!.ensureSchema();
    const id = ulid();
    const claims = await Promise.all([...stores, ...stores].map((store) => store.claim(id, { leaseMs: 5_000 })));
    expect(claims.filter((c) => c.status === 'acquired')).toHaveLength(1);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('lets the database clock decide the lease, whatever the application clock says', async () => {
    const database = new Database(tempFile());
    const store = createSqliteStore({ database });
    await store.ensureSchema();
    for (const skew of [86_400_000, -86_400_000]) {
      const id = ulid();
      await withSkewedAppClock(skew, async () => {
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
        expect(await store.claim(id, { leaseMs: 400 })).toEqual({ status: 'in_progress' });
        const { ms } = database
          .prepare(
            `SELECT expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS ms FROM kyb_webhook_events WHERE event_id = ?`,
          )
          .get(id) as { ms: number };
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThanOrEqual(400);
        await sleep(550);
        expect((await store.claim(id, { leaseMs: 400 })).status).toBe('acquired');
      });
    }
    database.close();
  });

  it('purges completed records past their retention, and with olderThanMs those completed longer ago', async () => {
    const database = new Database(tempFile());
    const store = createSqliteStore({ database });
    await store.ensureSchema();
    const ids = () => database.prepare('SELECT event_id FROM kyb_webhook_events ORDER BY 1').pluck().all() as string[];
    await expectPurgeCompleted(store, ids);
    database.close();
  });

  it('purges in batches of batchSize rows, one DELETE each, and refuses a batchSize or pauseRatio out of range', async () => {
    const deletes: string[] = [];
    const database = new Database(tempFile(), {
      verbose: (sql) => {
        if (typeof sql === 'string' && sql.startsWith('DELETE')) deletes.push(sql);
      },
    });
    const store = createSqliteStore({ database });
    await store.ensureSchema();
    const ids = () => database.prepare('SELECT event_id FROM kyb_webhook_events ORDER BY 1').pluck().all() as string[];
    await expectPurgeInBatches(store, ids, () => deletes.length);
    database.close();
  });

  it('purges stream cursors past their retention, and with olderThanMs those not advanced for that long', async () => {
    const database = new Database(tempFile());
    const store = createSqliteStore({ database });
    await store.ensureSchema();
    const streams = () =>
      database.prepare('SELECT stream_id FROM kyb_webhook_events_streams ORDER BY 1').pluck().all() as string[];
    await expectPurgeCursors(store, streams);
    database.close();
  });

  it('keeps claiming and purging on a file set up by hand before stream cursors existed (no cursors table)', async () => {
    const database = new Database(tempFile());
    database.exec(sqliteSchema().split('CREATE TABLE IF NOT EXISTS').slice(0, 2).join('CREATE TABLE IF NOT EXISTS'));
    const store = createSqliteStore({ database });
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 100 }))).toBe(true);
    await sleep(200);
    expect(await store.purgeCompleted()).toBe(1);
    // The cursor methods need the table: they fail with SQLite's own message until ensureSchema adds it.
    await expect(store.getCursor('req_1')).rejects.toThrow(/no such table/);
    await store.ensureSchema();
    expect(await store.advanceCursor('req_1', 2)).toBe(true);
    expect(await store.getCursor('req_1')).toBe(2);
    database.close();
  });

  it('does not close a database it was given, and closes one it opened', async () => {
    const database = new Database(tempFile());
    await createSqliteStore({ database }).close();
    expect(database.open).toBe(true);
    database.close();
    const owned = createSqliteStore({ filename: tempFile() });
    await owned.ensureSchema();
    await owned.close();
    await expect(owned.ensureSchema()).rejects.toThrow(/not open/);
  });

  it('throws until the schema exists, then works without being recreated', async () => {
    const store = createSqliteStore({ filename: tempFile() });
    await expect(store.claim(ulid(), { leaseMs: 1_000 })).rejects.toThrow(/no such table/);
    await store.ensureSchema();
    expect((await store.claim(ulid(), { leaseMs: 1_000 })).status).toBe('acquired');
    await store.close();
  });

  it('answers claim, complete and release with values once the first call prepared its statements', async () => {
    const store = createSqliteStore({ filename: tempFile() });
    await store.ensureSchema();
    const first = store.claim(ulid(), { leaseMs: 5_000 });
    expect(first).toBeInstanceOf(Promise); // preparing waits for the database to open
    expect((await first).status).toBe('acquired');
    const id = ulid();
    const claim = store.claim(id, { leaseMs: 5_000 });
    expect(claim).toEqual({ status: 'acquired', token: expect.any(String) });
    expect(store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
    expect(store.release(id, 'someone-else')).toBe(false);
    expect(store.complete(id, (claim as { token: string }).token, { retainMs: 60_000 })).toBe(true);
    expect(store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
    await store.close();
  });

  it('throws at once when a prepared statement fails, and the receiver answers 503 store_unavailable without running the handler', async () => {
    const database = new Database(tempFile());
    const store = createSqliteStore({ database });
    await store.ensureSchema();
    await store.claim(ulid(), { leaseMs: 1_000 });
    database.exec('DROP TABLE kyb_webhook_events');
    expect(() => store.claim(ulid(), { leaseMs: 1_000 })).toThrow(/no such table/);

    const signer = await createTestSigner({ secrets: { '1': 'sqlite-store-secret' } });
    const receiver = createReceiver({ secrets: { '1': 'sqlite-store-secret' }, store, logger: false });
    let handled = 0;
    receiver.on('kyb.data_request.pending_approval', () => void handled++);
    const { headers, body } = await signer.sign(testStream(['kyb.data_request.pending_approval'])[0]!);
    const result = await receiver.receive({ method: 'POST', headers, body });
    expect([result.status, result.code, handled]).toEqual([503, 'store_unavailable', 0]);
    database.close();
  });

  it('quotes a validated table name into its SQL', () => {
    expect(sqliteSchema('aux.events')).toContain('CREATE TABLE IF NOT EXISTS "aux"."events"');
    expect(() => createSqliteStore({ filename: tempFile(), table: 'events"; DROP TABLE users; --' })).toThrow(
      /identifier/,
    );
  });
});
