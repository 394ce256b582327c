/**
 * Bulk loads with each database's own tool, never row by row through the store: PostgreSQL `INSERT … SELECT` over
 * `generate_series`, MariaDB `INSERT … SELECT` over the Sequence engine's `seq_1_to_N`, SQLite a recursive CTE
 * `INSERT … SELECT`, all run server-side (in-process for SQLite), and Redis `redis-cli --pipe`. Each loaded record is
 * what a store leaves behind after claim → complete: state `completed`, a lease token shaped like the store's (a
 * UUID), `updated_at` when it completed and `expires_at` = `updated_at` + the retention (Redis: the key holding `c`
 * with that TTL). Event ids are ULID-shaped and older than every id the bench sends, as real ULIDs are.
 */
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { findBinary } from '../../../scripts/services/binaries.js';

/** What to load: `count` records, retained (expiring in the future) or expired (retention passed). */
export interface Rows {
  count: number;
  kind: 'retained' | 'expired';
  /** The retention they were completed with: `updated_at` is `expires_at` minus this. */
  retainMs: number;
}

/** Rows per statement: small enough to report progress, large enough that statement overhead does not count. */
const CHUNK = 1_000_000;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** The ith loaded event id (1-based): `01H` and 23 digits, 26 characters like a ULID, sorting before fresh ids. */
export function loadedId(i: number): string {
  return `01H${String(i).padStart(23, '0')}`;
}

/**
 * Where the loaded expiries fall, relative to now: record i (1-based) expires at now + `firstMs` + i × `stepMs`.
 * Retained records spread over one day to the end of the retention (completed over the past `retainMs` minus a day,
 * none expiring while the bench runs); expired ones over the last day, the newest a minute ago.
 *
 * @example
 * ```ts
 * expiryLayout({ count: 1000, kind: 'expired', retainMs: 30 * 86_400_000 }) // { firstMs: -86_400_000, stepMs: 86_340 }
 * ```
 */
export function expiryLayout(rows: Rows): { firstMs: number; stepMs: number } {
  if (rows.kind === 'expired') return { firstMs: -DAY_MS, stepMs: (DAY_MS - MINUTE_MS) / rows.count };
  return { firstMs: DAY_MS, stepMs: (rows.retainMs - DAY_MS) / rows.count };
}

/** [from, to] ranges of at most CHUNK ids covering 1…count. */
export function chunks(count: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (let from = 1; from <= count; from += CHUNK) ranges.push([from, Math.min(count, from + CHUNK - 1)]);
  return ranges;
}

/** PostgreSQL: `INSERT … SELECT … FROM generate_series` on one connection; settling vacuums and checkpoints. */
export function loadPostgres(url: string, table: string) {
  const withClient = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  // Offsets in ms from statement_timestamp(), the clock the store itself writes with.
  const at = (offset: string) => `statement_timestamp() + (${offset}) * interval '1 millisecond'`;
  const sql = `INSERT INTO "${table}" (event_id, state, token, expires_at, updated_at)
SELECT '01H' || lpad(i::text, 23, '0'), 'completed', md5(i::text)::uuid::text,
  ${at('$3::double precision + i * $4::double precision')},
  ${at('$3::double precision + i * $4::double precision - $5::double precision')}
FROM generate_series($1::bigint, $2::bigint) AS i`;
  return {
    fill: (rows: Rows, progress: (line: string) => void) =>
      withClient(async (client) => {
        const { firstMs, stepMs } = expiryLayout(rows);
        for (const [from, to] of chunks(rows.count)) {
          await client.query(sql, [from, to, firstMs, stepMs, rows.retainMs]);
          progress(`${to.toLocaleString('en-US')} rows`);
        }
      }),
    // A table in service has been vacuumed; left alone, autovacuum would start on the new rows mid-measurement.
    settle: () =>
      withClient(async (client) => {
        await client.query(`VACUUM (ANALYZE) "${table}"`);
        await client.query('CHECKPOINT');
      }),
  };
}

/** MariaDB: `INSERT … SELECT … FROM seq_<from>_to_<to>` (the Sequence engine); settling waits for the page flush. */
export function loadMySql(url: string, table: string) {
  const withConnection = async <T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> => {
    const connection = await mysql.createConnection({ uri: url });
    try {
      return await work(connection);
    } finally {
      await connection.end();
    }
  };
  // UTC_TIMESTAMP(3) is the store's clock too; the offsets are whole µs. The sequence is BIGINT UNSIGNED, in which
  // an offset below zero is an error: hence the signed copy `i`.
  const at = (offset: string) => `UTC_TIMESTAMP(3) + INTERVAL ROUND((${offset}) * 1000) MICROSECOND`;
  return {
    fill: (rows: Rows, progress: (line: string) => void) =>
      withConnection(async (connection) => {
        const { firstMs, stepMs } = expiryLayout(rows);
        for (const [from, to] of chunks(rows.count)) {
          await connection.query(
            `INSERT INTO \`${table}\` (event_id, state, token, expires_at, updated_at)
SELECT CONCAT('01H', LPAD(seq, 23, '0')), 'completed', UUID(), ${at('? + i * ?')}, ${at('? + i * ? - ?')}
FROM (SELECT seq, CAST(seq AS SIGNED) AS i FROM seq_${from}_to_${to}) AS s`,
            [firstMs, stepMs, firstMs, stepMs, rows.retainMs],
          );
          progress(`${to.toLocaleString('en-US')} rows`);
        }
      }),
    // InnoDB writes the loaded pages out lazily, for minutes after the load: have it flush them now and wait for that
    // (at most two minutes, and as long again for the purge threads below), so the flushing does not land in the
    // timing. The dirty-page limit is put back after.
    settle: () =>
      withConnection(async (connection) => {
        const status = async (name: string): Promise<number> => {
          const [rows] = (await connection.query('SHOW GLOBAL STATUS LIKE ?', [name])) as [
            { Value: string }[],
            unknown,
          ];
          return Number(rows[0]?.Value ?? 0);
        };
        const [limit] = (await connection.query('SELECT @@GLOBAL.innodb_max_dirty_pages_pct AS pct')) as [
          { pct: number }[],
          unknown,
        ];
        // InnoDB's purge threads remove deleted rows after their DELETE commits: after purgeCompleted they go on for
        // seconds, and claims timed meanwhile would pay for them as if no purge were running.
        await waitFor(async () => (await status('Innodb_history_list_length')) <= 100);
        await connection.query('SET GLOBAL innodb_max_dirty_pages_pct = 0');
        try {
          await waitFor(async () => (await status('Innodb_buffer_pool_pages_dirty')) <= 10);
        } finally {
          await connection.query('SET GLOBAL innodb_max_dirty_pages_pct = ?', [limit[0]?.pct ?? 90]);
        }
      }),
  };
}

/**
 * SQLite: a recursive CTE `INSERT … SELECT` per chunk on a second connection to the store's file (one transaction
 * each), then a checkpoint that empties the WAL into the file, as a long-running database's would be.
 */
export async function loadSqlite(
  file: string,
  table: string,
  rows: Rows,
  progress: (line: string) => void,
): Promise<void> {
  const database = new Database(file, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    const hex = (bytes: number) => `lower(hex(randomblob(${bytes})))`;
    const insert = database.prepare(`WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i < ?)
INSERT INTO "${table}" (event_id, state, token, expires_at, updated_at)
SELECT printf('01H%023d', i), 'completed', ${hex(4)} || '-' || ${hex(2)} || '-' || ${hex(2)} || '-' || ${hex(2)} || '-' || ${hex(6)},
  CAST(? + ? + i * ? AS INTEGER), CAST(? + ? + i * ? - ? AS INTEGER)
FROM s`);
    const { firstMs, stepMs } = expiryLayout(rows);
    for (const [from, to] of chunks(rows.count)) {
      // The store writes Unix ms of the database's clock, the same clock as Date.now() in this process.
      const now = Date.now();
      insert.run(from, to, now, firstMs, stepMs, now, firstMs, stepMs, rows.retainMs);
      progress(`${to.toLocaleString('en-US')} rows`);
    }
    database.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    database.close();
  }
}

/** One `SET <key> c PX <ms>` in the Redis protocol, as redis-cli --pipe reads it. */
export function respSet(key: string, ttlMs: number): string {
  const args = ['SET', key, 'c', 'PX', String(ttlMs)];
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
}

/**
 * Redis: `redis-cli --pipe` (from the redis-server's own package) fed `SET <prefix>{<id>} c PX <ttl>` for every
 * record, the key and value the store's COMPLETE script leaves. Only retained records: an expired key is gone.
 */
export async function loadRedis(url: URL, prefix: string, rows: Rows, progress: (line: string) => void): Promise<void> {
  if (rows.kind !== 'retained') throw new Error('Redis keeps no expired records: its keys expire by TTL');
  const cli = findBinary('redis-cli');
  if (!cli) throw new Error('redis-cli is not installed (it comes with redis-server: apt-get install redis-tools)');
  const args = ['-h', url.hostname, '-p', url.port || '6379', '-n', url.pathname.slice(1) || '0', '--pipe'];
  if (url.username) args.push('--user', decodeURIComponent(url.username));
  const env = url.password ? { ...process.env, REDISCLI_AUTH: decodeURIComponent(url.password) } : process.env;
  const child = spawn(cli, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const { firstMs, stepMs } = expiryLayout(rows);
  for (const [from, to] of chunks(rows.count)) {
    await writeChunk(child.stdin, from, to, (i) =>
      respSet(`${prefix}{${loadedId(i)}}`, Math.round(firstMs + i * stepMs)),
    );
    progress(`${to.toLocaleString('en-US')} keys sent`);
  }
  child.stdin.end();
  const code = await exited;
  const replies = /errors: (\d+), replies: (\d+)/.exec(output);
  if (code !== 0 || !replies || replies[1] !== '0' || Number(replies[2]) !== rows.count) {
    throw new Error(`redis-cli --pipe failed (exit ${code}): ${output.trim().split('\n').pop()}`);
  }
}

/** Writes the commands for ids from…to, 10,000 per write, waiting whenever the pipe is full. */
async function writeChunk(
  stream: NodeJS.WritableStream,
  from: number,
  to: number,
  command: (i: number) => string,
): Promise<void> {
  for (let start = from; start <= to; start += 10_000) {
    let text = '';
    for (let i = start; i <= Math.min(to, start + 9_999); i++) text += command(i);
    if (!stream.write(text)) await new Promise((resolve) => stream.once('drain', resolve));
  }
}

/** Polls `done` every 500 ms until it answers true, for at most 2 minutes (a server that never settles is measured). */
async function waitFor(done: () => Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 500) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
