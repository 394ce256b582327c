/**
 * Section E (issue 28 §3, "cost flat as the store fills"): a new event's claim → complete on PostgreSQL, MariaDB,
 * SQLite and Redis holding 0, 1M and 10M retained records (--quick: 0, 100k, 1M), bulk-loaded with each database's
 * own tool (bulk-load.ts), measured in paired rounds (flat-cost.ts); then on PostgreSQL and MariaDB, claim latency
 * while purgeCompleted deletes 1M expired records (purge.ts). Servers are the test harness's, started on
 * 127.0.0.1 by ../stores/servers.ts and stopped by PID; one engine runs at a time.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS } from '@kyb-webhooks/core';
import { DEFAULT_PURGE_BATCH_SIZE, DEFAULT_PURGE_PAUSE_RATIO } from '@kyb-webhooks/store-sql';
import type { HarnessOptions } from '../harness.js';
import type { Section } from '../section.js';
import { eventIds } from '../stores/load.js';
import { startServers, type Server, type ServerName, type Servers } from '../stores/servers.js';
import { loadedId, type Rows } from './bulk-load.js';
import {
  mysqlEngine,
  postgresEngine,
  redisEngine,
  sqliteEngine,
  type Engine,
  type EngineId,
  type SizedStore,
} from './engines.js';
import { claimAndComplete, measureSizes } from './flat-cost.js';
import { measurePurge, purgeName, purgeRuns, type PurgeResult, type PurgeRun } from './purge.js';
import { scaleReport, type EngineCost } from './tables.js';

interface Plan {
  /** Retained records per store; the first must be 0, the store the others are compared with. */
  sizes: number[];
  harness: HarnessOptions;
  /** Events the empty store runs (then is analyzed) before the timing: see {@link prime}. */
  primeEvents: number;
  purge: { rows: number; claims: number; warmup: number };
  /** A purge run of its own, on a freshly loaded table, per configuration: see {@link PURGE_RUNS}. */
  purgeRuns: PurgeRun[];
}

/**
 * The purges measured unless `KYB_BENCH_SCALE_PURGES` says otherwise: purgeCompleted's defaults (batches of 100, each
 * followed by a pause as long as it took), and the same batches with no pause, which is what the pause buys.
 */
const PURGE_RUNS: readonly PurgeRun[] = [
  { batchSize: DEFAULT_PURGE_BATCH_SIZE, pauseRatio: DEFAULT_PURGE_PAUSE_RATIO },
  { batchSize: DEFAULT_PURGE_BATCH_SIZE, pauseRatio: 0 },
];

function plan(quick: boolean): Plan {
  return quick
    ? {
        sizes: [0, 100_000, 1_000_000],
        harness: { rounds: 6, roundMs: 150, warmupMs: 150 },
        primeEvents: 200,
        purge: { rows: 100_000, claims: 1000, warmup: 200 },
        purgeRuns: purgeRuns(process.env['KYB_BENCH_SCALE_PURGES'], PURGE_RUNS),
      }
    : {
        // 25 rounds: the 95% interval of a median is then the 8th … 18th of 25 ratios.
        sizes: [0, 1_000_000, 10_000_000],
        harness: { rounds: 25, roundMs: 400, warmupMs: 400 },
        primeEvents: 1000,
        // 20,000 claims per baseline (15–30 s): samples of 5,000 (a few seconds) moved 0.5–3.0 ms between runs on
        // MariaDB on a shared machine, too much for a verdict against 2× to rest on.
        purge: { rows: 1_000_000, claims: 20_000, warmup: 500 },
        purgeRuns: purgeRuns(process.env['KYB_BENCH_SCALE_PURGES'], PURGE_RUNS),
      };
}

/** `KYB_BENCH_SCALE_ENGINES=postgres,redis` runs those engines only (a 10M load takes minutes per engine). */
function wanted(id: EngineId): boolean {
  const only = process.env['KYB_BENCH_SCALE_ENGINES'];
  return !only || only.split(',').includes(id);
}

const firstLine = (error: unknown): string => String((error as Error)?.message ?? error).split('\n')[0]!;

/** The servers the engines run on; the section installs and starts only those of the wanted engines. */
const SERVERS: readonly ServerName[] = ['redis', 'postgres', 'mysql'];

/** The wanted engines whose servers started, in the order they run; the others become skip lines. */
function engines(servers: Servers, tag: string, skipped: string[]): Engine[] {
  const list: Engine[] = [];
  const add = (id: EngineId, server: Server, make: (url: string, external: boolean) => Engine): void => {
    if (!wanted(id)) return;
    if (server.url === undefined) skipped.push(server.skipReason);
    else list.push(make(server.url, server.external));
  };
  add('redis', servers.redis, (url, external) => redisEngine(url, tag, external));
  if (wanted('sqlite')) list.push(sqliteEngine(servers.root, tag));
  add('mysql', servers.mysql, (url) => mysqlEngine(url, tag));
  add('postgres', servers.postgres, (url) => postgresEngine(url, tag));
  return list;
}

/**
 * Fills `store` with `rows` and checks that the store reads a loaded record as its own: a retained one answers a
 * claim with `completed`, an expired one is taken over (and released again).
 */
async function fill(store: SizedStore, rows: Rows, progress: (line: string) => void): Promise<number> {
  const start = Date.now();
  await store.fill(rows, progress);
  const ms = Date.now() - start;
  const id = loadedId(Math.ceil(rows.count / 2));
  const claim = await store.store.claim(id, { leaseMs: DEFAULT_LEASE_MS });
  const expected = rows.kind === 'retained' ? 'completed' : 'acquired';
  if (claim.status !== expected) {
    throw new Error(`a loaded ${rows.kind} record answers a claim with ${claim.status}, not ${expected}`);
  }
  if (claim.status === 'acquired') await store.store.release(id, claim.token);
  await store.settle?.();
  return ms;
}

/**
 * The empty store's first events, then its settling (ANALYZE on PostgreSQL): PostgreSQL caches, per connection, the
 * generic plan it made for the store's prepared statements while the table was empty, a sequential scan, and keeps it
 * until the table is next analyzed (autovacuum's analyze does that within a minute in service). Left alone, the empty
 * table's claims scanned every row the run itself inserted and cost 1.5–2× a loaded table's.
 */
async function prime(store: SizedStore, events: number, nextId: () => string): Promise<void> {
  for (let i = 0; i < events; i++) await claimAndComplete(store.store, nextId());
  await store.settle?.();
}

/** One engine: a store per size, each filled, then all measured together. */
async function measureEngine(
  engine: Engine,
  { sizes, harness: options, primeEvents }: Plan,
  nextId: () => string,
  progress: (line: string) => void,
): Promise<EngineCost> {
  const opened: { rows: number; store: SizedStore }[] = [];
  const loads: { rows: number; ms: number }[] = [];
  try {
    for (const [slot, rows] of sizes.entries()) {
      const store = await engine.open(`s${slot}`, slot);
      opened.push({ rows, store });
      if (rows === 0) {
        await prime(store, primeEvents, nextId);
        continue;
      }
      progress(`loading ${rows.toLocaleString('en-US')} retained records`);
      const ms = await fill(store, { count: rows, kind: 'retained', retainMs: DEFAULT_RETAIN_MS }, progress);
      loads.push({ rows, ms });
    }
    progress('measuring');
    const measured = await measureSizes(opened, options, nextId);
    return { engine, describe: opened[0]!.store.describe, sizes: measured, loads };
  } finally {
    for (const { store } of opened) await store.close().catch(() => {});
  }
}

/** One engine's purge run, on a table of its own holding only the expired records. */
async function purgeEngine(
  engine: Engine,
  options: Plan['purge'] & PurgeRun,
  slot: number,
  nextId: () => string,
  progress: (line: string) => void,
): Promise<PurgeResult> {
  const store = await engine.open(`purge${slot}`, slot);
  try {
    progress(`loading ${options.rows.toLocaleString('en-US')} expired records`);
    await fill(store, { count: options.rows, kind: 'expired', retainMs: DEFAULT_RETAIN_MS }, progress);
    return await measurePurge(store, options.rows, options, nextId, progress);
  } finally {
    await store.close().catch(() => {});
  }
}

export const scaleSection: Section = {
  name: 'scale',
  title: 'E · scale: claim → complete as the store fills (0, 1M, 10M records), claims while purgeCompleted runs',
  async run(bench) {
    const chosen = plan(bench.quick);
    const { sizes, harness, purge } = chosen;
    const tag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
    const servers = await startServers(bench.progress, SERVERS.filter(wanted));
    const skipped: string[] = [];
    const failures: string[] = [];
    try {
      const list = engines(servers, tag, skipped);
      const nextId = eventIds(tag);
      const costs: EngineCost[] = [];
      for (const engine of list) {
        const progress = (line: string): void => bench.progress(`scale: ${engine.name}: ${line}`);
        try {
          costs.push(await measureEngine(engine, chosen, nextId, progress));
        } catch (error) {
          failures.push(`${engine.name}, cost by size: ${firstLine(error)}`);
        }
      }
      const purges: { engine: Engine; result: PurgeResult }[] = [];
      for (const engine of list.filter((candidate) => candidate.id === 'postgres' || candidate.id === 'mysql')) {
        const progress = (line: string): void => bench.progress(`scale: ${engine.name} purge: ${line}`);
        for (const [index, run] of chosen.purgeRuns.entries()) {
          try {
            const slot = sizes.length + index;
            purges.push({ engine, result: await purgeEngine(engine, { ...purge, ...run }, slot, nextId, progress) });
          } catch (error) {
            failures.push(`${engine.name}, ${purgeName(run)}: ${firstLine(error)}`);
          }
        }
      }
      return scaleReport({
        costs,
        purges,
        rounds: harness.rounds,
        roundMs: harness.roundMs,
        failures,
        skipped,
        footer: [
          "Servers: the test harness's (scripts/services/) on 127.0.0.1 unless KYB_BENCH_*_URL name others: " +
            'PostgreSQL with shared_buffers=32MB and fsync off, MariaDB with a 64 MB buffer pool, Redis without ' +
            'persistence; one engine at a time, one delivery in flight.',
          `Loaded records are completed ones (a UUID token, expires_at = updated_at + ${DEFAULT_RETAIN_MS / 86_400_000} days), ` +
            `ids ULID-shaped and older than the new events' ids; expired ones expired during the last day.`,
        ],
      });
    } finally {
      await servers.stop();
    }
  },
};
