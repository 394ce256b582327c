import { inBatches, type PurgeBatch, type PurgePlan } from '../sql-store.js';
import { retryingDeadlocks } from './deadlock.js';
import type { MySqlQueryable } from './store.js';

interface Affected {
  affectedRows: number;
}

/** How a key column is written back into the DELETE: bytes as a hex literal, an integer as its digits. */
export type KeyKind = 'bytes' | 'integer';

/**
 * One table a purge deletes from: its quoted name, its primary key's columns with their kinds, in key order, and
 * which rows go: a condition with no `?` in it, so that no statement of the purge is scanned for placeholders (a
 * batch's DELETE is tens of kilobytes long).
 */
export interface PurgeTarget {
  from: string;
  key: Readonly<Record<string, KeyKind>>;
  where: string;
}

/**
 * Deletes `target`'s rows matching its condition, `plan.size` at a time (pausing as `plan` says), and resolves to
 * how many went.
 *
 * Each batch chooses its rows with a plain read, then deletes them by primary key (in statements of at most
 * {@link MAX_IN_VALUES} key values), the condition checked again. Why not one `DELETE … WHERE expires_at <= now
 * LIMIT n`: under InnoDB's default REPEATABLE READ, that scan locks the index as it goes, and the last batch goes on
 * to lock the first row past the expired ones, which is always a live one, most often the lease a claim has just
 * taken. A purge batch then waited for that row's next statement (a
 * claim's complete()), claims waited behind the batch's locks, and the two could deadlock (complete() locks the row,
 * then its index entry; the scan, the entry, then the row). A plain read takes no lock, and a delete by primary key
 * locks only the rows it names, each expired and so not a lease anyone holds, unless a claim is taking over that very
 * row (the condition, checked again, then leaves it alone).
 *
 * @example
 * ```ts
 * await purgeMySqlTable(pool, { size: 1_000, pauseRatio: 0 }, { from: '`kyb_webhook_events`', key: { event_id: 'bytes' }, where: 'expires_at <= UTC_TIMESTAMP(3)' })
 * ```
 */
export function purgeMySqlTable(pool: MySqlQueryable, plan: PurgePlan, target: PurgeTarget): Promise<number> {
  const { from, key, where } = target;
  const columns = Object.entries(key);
  // The read answers each key as text ready for the DELETE (HEX of the bytes, the integer's digits): written here,
  // a batch of 1,000 keys costs the event loop about 1 ms, against about 3 ms for the same keys as Buffers escaped by
  // the driver (mysql2's escaping and placeholder scan; process CPU over a 300,000-row purge, and --cpu-prof).
  const read = columns.map(
    ([name, kind], i) => `${kind === 'bytes' ? `HEX(${name})` : `CAST(${name} AS CHAR)`} AS k${i}`,
  );
  const chooseSql = `SELECT ${read.join(', ')} FROM ${from} WHERE ${where} LIMIT ${plan.size}`;
  // One key column: a plain IN list. Several: row constructors, (a, b) IN ((…, …), …). FORCE INDEX (PRIMARY), which
  // only the multi-table form of DELETE takes: when the rows named are most of a small table, the optimizer would
  // rather scan it all, locking every row and gap on the way. At most MAX_IN_VALUES values per DELETE (below).
  const names = columns.map(([name]) => name).join(', ');
  const deleteFrom = `DELETE x FROM ${from} AS x FORCE INDEX (PRIMARY) WHERE ${columns.length === 1 ? names : `(${names})`} IN`;
  const literal = (row: Record<string, unknown>): string => {
    const parts = columns.map(([, kind], i) => keyLiteral(kind, row[`k${i}`]));
    return parts.length === 1 ? parts[0]! : `(${parts.join(', ')})`;
  };
  const keysPerDelete = Math.floor(MAX_IN_VALUES / columns.length);
  return inBatches(plan, async (): Promise<PurgeBatch> => {
    const [rows] = (await pool.query(chooseSql)) as [Record<string, unknown>[], unknown];
    const keys = rows.map(literal); // every key checked before any is deleted
    let deleted = 0;
    for (let start = 0; start < keys.length; start += keysPerDelete) {
      const deleteSql = `${deleteFrom} (${keys.slice(start, start + keysPerDelete).join(', ')}) AND (${where})`;
      const [ok] = (await retryingDeadlocks(() => pool.query(deleteSql))) as [Affected, unknown];
      deleted += ok.affectedRows;
    }
    return { chosen: rows.length, deleted };
  });
}

/**
 * The most values one DELETE's IN list holds (a key of two columns counts two). MariaDB turns an IN list of
 * `in_predicate_conversion_threshold` (1,000 by default) values or more into a join with a table of the values, which
 * scans the whole table, FORCE INDEX or not, and so locks every row: live leases, and the gaps claims insert into.
 * MariaDB 10.11's EXPLAIN: 999 keys read as ranges of the primary key, 1,000 as the whole table; mysql.test.ts holds a
 * lease past 2,500 expired rows, and with 1,000 keys per DELETE the purge waits for it.
 */
const MAX_IN_VALUES = 500;

const HEX = /^[0-9A-F]*$/;
const DIGITS = /^-?[0-9]+$/;

/** A key as the read answered it, written as SQL: only hex digits or an integer's digits ever reach the statement. */
function keyLiteral(kind: KeyKind, text: unknown): string {
  if (kind === 'bytes' && typeof text === 'string' && HEX.test(text)) return `X'${text}'`;
  if (kind === 'integer' && typeof text === 'string' && DIGITS.test(text)) return text;
  throw new Error(
    `purgeCompleted: the database answered a key that is not ${kind === 'bytes' ? 'HEX() text' : 'an integer'}; nothing more was deleted.`,
  );
}
