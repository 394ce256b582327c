/**
 * The stores under test, each with the raw single-statement write it is compared with, measured over the same client
 * or connection pool. Clients are wrapped to count what reaches the server: ioredis `sendCommand` calls, `pool.query`
 * calls for pg, and statement executions (plus transactions) for better-sqlite3, which runs in process.
 */
import { join } from 'node:path';
import { createMemoryStore, type DedupeStore } from '@kyb-webhooks/core';
import { createRedisStore } from '@kyb-webhooks/store-redis';
import { createPostgresStore, postgresSchema, type PgQueryable } from '@kyb-webhooks/store-sql/postgres';
import { createSqliteStore, sqliteSchema } from '@kyb-webhooks/store-sql/sqlite';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { connectCountedRedis, countedSqlite } from '../counted-clients.js';

export type BackendId = 'redis' | 'postgres' | 'sqlite' | 'memory';

export interface Baseline {
  /** What one baseline operation is, for the legend. */
  label: string;
  op: (eventId: string) => Promise<unknown>;
}

export interface Backend {
  id: BackendId;
  /** Row label. */
  name: string;
  store: DedupeStore;
  /** Cumulative client calls that reach the server (or, in process, statements executed). */
  calls: () => number;
  /** Cumulative transactions (in-process SQL only). */
  transactions?: () => number;
  /** Runs over the same client, so `calls` counts it too; undefined for the memory store. */
  baseline?: Baseline;
  /** A server-side count of the store's commands, to cross-check `calls` (Redis: EVALSHA + EVAL in commandstats). */
  serverCalls?: () => Promise<number>;
  /** Server and client, for the report header. */
  describe: string;
  /** Called before each run: the memory store starts empty each time. */
  reset?: () => void;
  close(): Promise<void>;
}

/** A lease token's length (`p:` + 32 hex digits in Redis), so the raw writes carry the same bytes as the store's. */
const RAW_TOKEN = '0123456789abcdef0123456789abcdef';

/** Redis through one ioredis connection (no auto-pipelining: every command is its own write). */
export async function redisBackend(url: string, tag: string, external: boolean): Promise<Backend> {
  const { client, calls, version } = await connectCountedRedis(url);

  const prefix = `kyb:bench:${tag}:`;
  const rawPrefix = `${prefix}raw:`;
  return {
    id: 'redis',
    name: 'Redis',
    store: createRedisStore({ client, prefix }),
    calls,
    baseline: {
      label: 'SET key val NX PX 60000',
      op: (eventId) => client.set(`${rawPrefix}{${eventId}}`, `p:${RAW_TOKEN}`, 'PX', 60_000, 'NX'),
    },
    async serverCalls() {
      const stats = await client.info('commandstats');
      let total = 0;
      for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) total += Number(match[1]);
      return total;
    },
    describe: `Redis ${version}, one ioredis connection`,
    async close() {
      try {
        // A server of our own is thrown away; on a shared one, delete this run's keys.
        if (external) await deleteKeys(client, `${prefix}*`);
      } finally {
        await client.quit().catch(() => client.disconnect());
      }
    },
  };
}

async function deleteKeys(client: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** PostgreSQL through a pg Pool of `poolSize` connections. */
export async function postgresBackend(url: string, tag: string, poolSize: number): Promise<Backend> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {}); // an idle client losing its connection: the next query reports it
  let calls = 0;
  const db: PgQueryable = {
    query(text, values) {
      calls++;
      return pool.query(text, values);
    },
  };
  const table = `kyb_bench_${tag}`;
  const rawTable = `kyb_bench_raw_${tag}`;
  try {
    const store = createPostgresStore({ pool: db, table });
    await store.ensureSchema();
    // The raw table has the same schema (primary key and expiry index), so both pay the same index upkeep.
    await pool.query(postgresSchema(rawTable));
    // Open every connection before timing, so no round pays for connecting.
    const clients = await Promise.all(Array.from({ length: poolSize }, () => pool.connect()));
    const version =
      (await clients[0]!.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version'])).rows[0]?.v ?? '?';
    for (const client of clients) client.release();
    const rawSql = `INSERT INTO "${rawTable}" (event_id, state, token, expires_at, updated_at)
VALUES ($1, 'in_progress', $2, statement_timestamp() + interval '60 seconds', statement_timestamp())
ON CONFLICT DO NOTHING`;
    return {
      id: 'postgres',
      name: 'PostgreSQL',
      store,
      calls: () => calls,
      baseline: {
        label: 'INSERT INTO t (event_id, …) VALUES ($1, …) ON CONFLICT DO NOTHING',
        op: (eventId) => db.query(rawSql, [eventId, RAW_TOKEN]),
      },
      describe: `PostgreSQL ${version.split(' ')[0]}, pg Pool of ${poolSize}`,
      async close() {
        try {
          await pool.query(`DROP TABLE IF EXISTS "${table}", "${rawTable}"`);
        } finally {
          await pool.end();
        }
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}

/** SQLite through better-sqlite3 on a WAL file (as the store opens one itself), wrapped to count executions. */
export async function sqliteBackend(dir: string, tag: string): Promise<Backend> {
  const database = new Database(join(dir, `bench-${tag}.sqlite`));
  database.pragma('journal_mode = WAL');
  const { database: counted, statements, transactions } = countedSqlite(database);
  try {
    const table = `kyb_bench_${tag}`;
    const rawTable = `kyb_bench_raw_${tag}`;
    const store = createSqliteStore({ database: counted, table });
    await store.ensureSchema();
    database.exec(sqliteSchema(rawTable));
    const raw = counted.prepare(`INSERT INTO "${rawTable}" (event_id, state, token, expires_at, updated_at)
VALUES (?, 'in_progress', ?, ?, ?) ON CONFLICT DO NOTHING`);
    const version = (database.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    return {
      id: 'sqlite',
      name: 'SQLite',
      store,
      calls: statements,
      transactions,
      baseline: {
        label: 'the same INSERT … ON CONFLICT DO NOTHING (prepared, autocommit)',
        async op(eventId) {
          const now = Date.now();
          return raw.run(eventId, RAW_TOKEN, now + 60_000, now);
        },
      },
      describe: `SQLite ${version} (better-sqlite3, WAL file, synchronous=${String(database.pragma('synchronous', { simple: true }))})`,
      async close() {
        database.close();
      },
    };
  } catch (error) {
    database.close();
    throw error;
  }
}

/** The in-process memory store, for reference: emptied before each run so it never works at its entry cap. */
export function memoryBackend(): Backend {
  let store = createMemoryStore({ maxEntries: Number.MAX_SAFE_INTEGER });
  const backend: Backend = {
    id: 'memory',
    name: 'memory (reference)',
    store,
    calls: () => 0,
    describe: 'memory store, emptied before each run',
    reset() {
      store = createMemoryStore({ maxEntries: Number.MAX_SAFE_INTEGER });
      backend.store = store;
    },
    async close() {},
  };
  return backend;
}
