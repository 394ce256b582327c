/**
 * Store clients that count what reaches the server (Redis commands) or runs (SQLite statements, in process): the
 * stores and streams sections judge round trips on these counts.
 */
import type { SqliteDatabaseLike, SqliteStatementLike } from '@kyb-webhooks/store-sql/sqlite';
import type Database from 'better-sqlite3';
import { Redis } from 'ioredis';

export interface CountedRedis {
  client: Redis;
  /** Commands sent so far. */
  calls(): number;
  /** The server's redis_version. */
  version: string;
}

/**
 * One ioredis connection, every command its own write (no auto-pipelining), counting the commands it sends. A
 * connection that fails throws the client's own error.
 *
 * @example
 * ```ts
 * const { client, calls, version } = await connectCountedRedis('redis://127.0.0.1:6379')
 * ```
 */
export async function connectCountedRedis(url: string): Promise<CountedRedis> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let lastError: Error | undefined;
  client.on('error', (error: Error) => (lastError = error));
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw lastError ?? error;
  }
  let calls = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    calls++;
    return send(...args);
  }) as Redis['sendCommand'];
  const version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? '?';
  return { client, calls: () => calls, version };
}

export interface CountedSqlite {
  /** The database to give `createSqliteStore`. */
  database: SqliteDatabaseLike;
  /** Statement executions (run and get) so far. */
  statements(): number;
  /** Immediate transactions started so far. */
  transactions(): number;
}

/**
 * Wraps an open better-sqlite3 database so every statement execution and transaction is counted: SQLite runs in
 * process, so these counts stand where the other stores' bench counts queries on the wire.
 *
 * @example
 * ```ts
 * const counted = countedSqlite(new Database(file))
 * const store = createSqliteStore({ database: counted.database, table })
 * counted.statements() // executions so far
 * ```
 */
export function countedSqlite(database: Database.Database): CountedSqlite {
  let statements = 0;
  let transactions = 0;
  const counted: SqliteDatabaseLike = {
    prepare(sql) {
      const statement = database.prepare(sql);
      const wrapped: SqliteStatementLike = {
        run(...params) {
          statements++;
          return statement.run(...params);
        },
        get(...params) {
          statements++;
          return statement.get(...params);
        },
      };
      return wrapped;
    },
    exec: (sql) => database.exec(sql),
    transaction(fn) {
      const transaction = database.transaction(fn as (...args: unknown[]) => unknown);
      return {
        immediate(...args) {
          transactions++;
          return transaction.immediate(...args);
        },
      };
    },
    close: () => database.close(),
  };
  return { database: counted, statements: () => statements, transactions: () => transactions };
}
