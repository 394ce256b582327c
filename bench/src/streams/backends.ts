/**
 * The five stores of the stream section, each able to open fresh, empty namespaces (a key prefix, a table) over one
 * client, so every backfill round starts from a stream no cursor has seen. The clients are wrapped to count what
 * reaches the server (ioredis commands, pg and mysql2 queries; statements for SQLite, which runs in process), the
 * wire-level cross-check of the store calls counted in counting.ts.
 */
import { join } from 'node:path';
import { createMemoryStore, type StreamCursorStore } from '@kyb-webhooks/core';
import { createRedisStore } from '@kyb-webhooks/store-redis';
import { createMySqlStore, type MySqlQueryable } from '@kyb-webhooks/store-sql/mysql';
import { createPostgresStore, type PgQueryable } from '@kyb-webhooks/store-sql/postgres';
import { createSqliteStore } from '@kyb-webhooks/store-sql/sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { connectCountedRedis, countedSqlite } from '../counted-clients.js';

export type StreamBackendId = 'memory' | 'redis' | 'postgres' | 'mysql' | 'sqlite';

/** One empty namespace of a store: its own keys or tables. */
export interface Namespace {
  store: StreamCursorStore;
  /** Deletes the namespace's keys or tables (outside any timing). */
  dispose(): Promise<void>;
}

export interface StreamBackend {
  id: StreamBackendId;
  /** Row label. */
  name: string;
  /** Server and client, for the report's footer. */
  describe: string;
  /** What {@link wire} counts, or undefined when nothing leaves the process (memory). */
  wireLabel?: 'commands' | 'queries' | 'statements';
  /** Cumulative client calls that reached the server (SQLite: statements executed). */
  wire(): number;
  /** A fresh, empty namespace named by `label` (letters, digits, `_`). */
  open(label: string): Promise<Namespace>;
  close(): Promise<void>;
}

export function memoryBackend(): StreamBackend {
  return {
    id: 'memory',
    name: 'memory',
    describe: 'memory store',
    wire: () => 0,
    // No entry cap in reach: eviction would be measured instead of the cursor.
    open: async () => ({ store: createMemoryStore({ maxEntries: Number.MAX_SAFE_INTEGER }), dispose: async () => {} }),
    async close() {},
  };
}

/** Redis through one ioredis connection, every command its own write (no auto-pipelining). */
export async function redisBackend(url: string, tag: string): Promise<StreamBackend> {
  const { client, calls, version } = await connectCountedRedis(url);
  const deleteKeys = async (pattern: string): Promise<void> => {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  };
  return {
    id: 'redis',
    name: 'Redis',
    describe: `Redis ${version}, one ioredis connection`,
    wireLabel: 'commands',
    wire: calls,
    async open(label) {
      const prefix = `kyb:bench:streams:${tag}:${label}:`;
      return { store: createRedisStore({ client, prefix }), dispose: () => deleteKeys(`${prefix}*`) };
    },
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

/** PostgreSQL through a pg Pool (one delivery in flight at a time, so its size does not matter). */
export async function postgresBackend(url: string, tag: string): Promise<StreamBackend> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {}); // an idle client losing its connection: the next query reports it
  let calls = 0;
  const db: PgQueryable = {
    query(text, values) {
      calls++;
      return pool.query(text, values);
    },
  };
  try {
    const version =
      (await pool.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version'])).rows[0]?.v ?? '?';
    return {
      id: 'postgres',
      name: 'PostgreSQL',
      describe: `PostgreSQL ${version.split(' ')[0]}, pg Pool`,
      wireLabel: 'queries',
      wire: () => calls,
      async open(label) {
        const table = `kyb_bench_${tag}_${label}`;
        const store = createPostgresStore({ pool: db, table });
        await store.ensureSchema();
        return {
          store,
          dispose: async () => void (await pool.query(`DROP TABLE IF EXISTS "${table}", "${table}_streams"`)),
        };
      },
      async close() {
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}

interface MySqlPool extends MySqlQueryable {
  end(): Promise<void>;
}
interface MySqlModule {
  createPool(options: { uri: string; connectionLimit: number }): MySqlPool;
}

/** mysql2, loaded only when the MariaDB backend runs. Undefined when it cannot be loaded (MariaDB is then skipped). */
async function loadMysql2(): Promise<MySqlModule | undefined> {
  try {
    const loaded = (await import('mysql2/promise')) as unknown as { default?: MySqlModule } & MySqlModule;
    return loaded.default ?? loaded;
  } catch {
    return undefined;
  }
}

/** MariaDB (MySQL-compatible) through a mysql2 pool. */
export async function mysqlBackend(url: string, tag: string): Promise<StreamBackend> {
  const mysql = await loadMysql2();
  if (!mysql) throw new Error('mysql2 could not be loaded (run pnpm install)');
  const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
  let calls = 0;
  const db: MySqlQueryable = {
    query(sql, values) {
      calls++;
      return pool.query(sql, values);
    },
  };
  try {
    const [rows] = (await pool.query('SELECT VERSION() AS v')) as [{ v: string }[], unknown];
    return {
      id: 'mysql',
      name: 'MariaDB',
      describe: `MariaDB ${rows[0]?.v.split('-')[0] ?? '?'}, mysql2 pool`,
      wireLabel: 'queries',
      wire: () => calls,
      async open(label) {
        const table = `kyb_bench_${tag}_${label}`;
        const store = createMySqlStore({ pool: db, table });
        await store.ensureSchema();
        return {
          store,
          dispose: async () => void (await pool.query(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_streams\``)),
        };
      },
      async close() {
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}

/** SQLite through better-sqlite3 on a WAL file, wrapped to count statement executions. */
export async function sqliteBackend(dir: string, tag: string): Promise<StreamBackend> {
  const database = new Database(join(dir, `bench-streams-${tag}.sqlite`));
  database.pragma('journal_mode = WAL');
  const { database: counted, statements } = countedSqlite(database);
  const version = (database.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  return {
    id: 'sqlite',
    name: 'SQLite',
    describe: `SQLite ${version} (better-sqlite3, WAL file)`,
    wireLabel: 'statements',
    wire: statements,
    async open(label) {
      const table = `kyb_bench_${tag}_${label}`;
      const store = createSqliteStore({ database: counted, table });
      await store.ensureSchema();
      return {
        store,
        dispose: async () =>
          void database.exec(`DROP TABLE IF EXISTS "${table}"; DROP TABLE IF EXISTS "${table}_streams";`),
      };
    },
    async close() {
      database.close();
    },
  };
}
