/**
 * The four engines of the scale section, each able to open stores of its own, one per size, over clients of their
 * own, so the calls one store makes are counted apart from the others'. The clients and their counting are the
 * store and stream sections' (../stores/backends.ts, ../streams/backends.ts); this file only picks them, and binds
 * each store to the bulk loader of its engine (bulk-load.ts).
 */
import { join } from 'node:path';
import type { DedupeStore } from '@kyb-webhooks/core';
import type { SqlDedupeStore } from '@kyb-webhooks/store-sql';
import { postgresBackend, redisBackend, sqliteBackend } from '../stores/backends.js';
import { mysqlBackend } from '../streams/backends.js';
import { loadMySql, loadPostgres, loadRedis, loadSqlite, type Rows } from './bulk-load.js';

export type EngineId = 'postgres' | 'mysql' | 'sqlite' | 'redis';

/** One store of one size: what it is measured through, and how its engine fills it. */
export interface SizedStore {
  store: DedupeStore;
  /** Client calls that reached the server so far (SQLite: statements run in process). */
  calls(): number;
  /** BEGIN IMMEDIATE transactions so far (SQLite only). */
  transactions?(): number;
  /** Server and client, for the report. */
  describe: string;
  /** Bulk-loads `rows.count` records with the engine's own tool, bypassing the store. */
  fill(rows: Rows, progress: (line: string) => void): Promise<void>;
  /** The SQL stores' purge, absent on Redis (its records expire by TTL). */
  purge?: SqlDedupeStore['purgeCompleted'];
  /** Settles the server after a bulk load or a purge (vacuum, flush), so its background work is not timed. */
  settle?(): Promise<void>;
  close(): Promise<void>;
}

export interface Engine {
  id: EngineId;
  name: string;
  /** What `calls` counts. */
  unit: 'queries' | 'commands' | 'statements';
  /** A fresh, empty store named by `label` (letters, digits); `slot` numbers the stores of one run from 0. */
  open(label: string, slot: number): Promise<SizedStore>;
}

/** pg connections per store: one delivery in flight plus, in the purge run, the purge's own statement. */
const PG_POOL_SIZE = 4;

/** PostgreSQL: a table per size, each over its own pg Pool (the store section's backend). */
export function postgresEngine(url: string, tag: string): Engine {
  return {
    id: 'postgres',
    name: 'PostgreSQL',
    unit: 'queries',
    async open(label) {
      const backend = await postgresBackend(url, `${tag}_${label}`, PG_POOL_SIZE);
      const store = backend.store as SqlDedupeStore;
      const loader = loadPostgres(url, store.table);
      return {
        store,
        calls: backend.calls,
        describe: backend.describe,
        fill: loader.fill,
        settle: loader.settle,
        purge: (options) => store.purgeCompleted(options),
        close: () => backend.close(),
      };
    },
  };
}

/** MariaDB: a table per size, each over its own mysql2 pool (the stream section's backend). */
export function mysqlEngine(url: string, tag: string): Engine {
  return {
    id: 'mysql',
    name: 'MariaDB',
    unit: 'queries',
    async open(label) {
      const backend = await mysqlBackend(url, tag);
      try {
        const namespace = await backend.open(label);
        const store = namespace.store as SqlDedupeStore;
        const loader = loadMySql(url, store.table);
        return {
          store,
          calls: backend.wire,
          describe: backend.describe,
          fill: loader.fill,
          settle: loader.settle,
          purge: (options) => store.purgeCompleted(options),
          async close() {
            await namespace.dispose().finally(() => backend.close());
          },
        };
      } catch (error) {
        await backend.close().catch(() => {});
        throw error;
      }
    },
  };
}

/** SQLite: a database file per size (a file is what fills up), each through its own better-sqlite3 connection. */
export function sqliteEngine(dir: string, tag: string): Engine {
  return {
    id: 'sqlite',
    name: 'SQLite',
    unit: 'statements',
    async open(label) {
      const fileTag = `${tag}_${label}`;
      const backend = await sqliteBackend(dir, fileTag);
      const store = backend.store as SqlDedupeStore;
      // The file sqliteBackend opens (bench-<tag>.sqlite in dir); the loader refuses a file that does not exist.
      const file = join(dir, `bench-${fileTag}.sqlite`);
      return {
        store,
        calls: backend.calls,
        transactions: backend.transactions,
        describe: backend.describe,
        fill: (rows, progress) => loadSqlite(file, store.table, rows, progress),
        purge: (options) => store.purgeCompleted(options),
        close: () => backend.close(),
      };
    },
  };
}

/**
 * Redis: a logical database per size (`SELECT <slot>`), so the empty store's keyspace really is empty; each over
 * one ioredis connection of its own. Loaded with `redis-cli --pipe`.
 */
export function redisEngine(url: string, tag: string, external: boolean): Engine {
  return {
    id: 'redis',
    name: 'Redis',
    unit: 'commands',
    async open(label, slot) {
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${slot}`;
      const backend = await redisBackend(dbUrl.toString(), `${tag}_${label}`, external);
      return {
        store: backend.store,
        calls: backend.calls,
        describe: backend.describe,
        // The key prefix redisBackend gives its store; a wrong one shows in the check after the load (fill.ts).
        fill: (rows, progress) => loadRedis(dbUrl, `kyb:bench:${tag}_${label}:`, rows, progress),
        close: () => backend.close(),
      };
    },
  };
}
