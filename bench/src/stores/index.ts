/**
 * Section C: the dedupe stores on the happy path (claim → complete, a fresh event id each time) at 1 and 32
 * deliveries in flight, beside the raw single-statement write measured in the same run over the same client: events
 * per second, the ratio to the raw write, and round trips per event counted at the client. Redis and PostgreSQL run
 * as servers of their own on 127.0.0.1 (see servers.ts); SQLite and the memory store run in process.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS } from '@kyb-webhooks/core';
import { int, table, verdict } from '../report.js';
import type { Section } from '../section.js';
import {
  memoryBackend,
  postgresBackend,
  redisBackend,
  sqliteBackend,
  type Backend,
  type BackendId,
} from './backends.js';
import { eventIds, measureLoad, type LoadCandidate, type LoadOptions, type LoadResult } from './load.js';
import { startServers, type Server } from './servers.js';

const IN_FLIGHT = [1, 32] as const;
const TARGET_ROUND_TRIPS = 2;
const TARGET_RATIO = 0.45;
/**
 * pg's default pool size. More connections do not help on this 2-core machine: 32 backends for 32 in flight made
 * both the store and the raw INSERT slower (same ratio), as the server processes only compete for the CPUs.
 */
const PG_POOL_SIZE = 10;

function loadOptions(quick: boolean): LoadOptions {
  return quick ? { rounds: 3, roundMs: 150, warmupMs: 100 } : { rounds: 7, roundMs: 500, warmupMs: 300 };
}

/** claim → complete; anything but `acquired` and `true` is a failure (every id is fresh). */
function happyPath(backend: Backend): (eventId: string) => Promise<void> {
  return async (eventId) => {
    const claim = await backend.store.claim(eventId, { leaseMs: DEFAULT_LEASE_MS });
    if (claim.status !== 'acquired') throw new Error(`claim of a fresh id returned ${claim.status}`);
    if (!(await backend.store.complete(eventId, claim.token, { retainMs: DEFAULT_RETAIN_MS }))) {
      throw new Error('complete returned false right after the claim');
    }
  };
}

/** The server-side count, or undefined when there is none or the server stopped answering (a failed run says why). */
const serverCalls = (backend: Backend): Promise<number | undefined> =>
  backend.serverCalls?.().catch(() => undefined) ?? Promise.resolve(undefined);

const key = (backend: Backend, kind: 'store' | 'raw'): string => `${backend.id}:${kind}`;

function candidates(backend: Backend): LoadCandidate[] {
  const list: LoadCandidate[] = [];
  for (const inFlight of IN_FLIGHT) {
    list.push({
      key: key(backend, 'store'),
      inFlight,
      op: happyPath(backend),
      calls: backend.calls,
      transactions: backend.transactions,
      reset: backend.reset,
    });
    if (backend.baseline)
      list.push({ key: key(backend, 'raw'), inFlight, op: backend.baseline.op, calls: backend.calls });
  }
  return list;
}

const percent = (value: number): string => (Number.isFinite(value) ? `${Math.round(value * 100)}%` : '—');
const perEvent = (calls: number, ops: number): string => (ops > 0 ? (calls / ops).toFixed(2) : '—');

async function open(
  name: string,
  server: Server,
  connect: (url: string, external: boolean) => Promise<Backend>,
  skipped: string[],
): Promise<Backend | undefined> {
  if (server.url === undefined) {
    skipped.push(server.skipReason);
    return undefined;
  }
  try {
    return await connect(server.url, server.external);
  } catch (error) {
    skipped.push(`${name}: could not connect or set up (${String((error as Error)?.message ?? error).split('\n')[0]})`);
    return undefined;
  }
}

export const storeSection: Section = {
  name: 'stores',
  title: 'C · dedupe stores: happy path at 1 and 32 in flight vs the raw single-statement write',
  async run(bench) {
    const options = loadOptions(bench.quick);
    const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    const servers = await startServers(bench.progress);
    const backends: Backend[] = [];
    const skipped: string[] = [];
    try {
      const redis = await open('Redis', servers.redis, (url, external) => redisBackend(url, tag, external), skipped);
      const postgres = await open(
        'PostgreSQL',
        servers.postgres,
        (url) => postgresBackend(url, tag, PG_POOL_SIZE),
        skipped,
      );
      const sqlite = await open(
        'SQLite',
        { url: servers.root, external: false },
        (dir) => sqliteBackend(dir, tag),
        skipped,
      );
      // PostgreSQL last: its background work after a burst of writes (autovacuum, WAL writer) would otherwise eat
      // into the next store's figures on a 2-core machine.
      for (const backend of [memoryBackend(), sqlite, redis, postgres]) if (backend) backends.push(backend);
      for (const line of skipped) bench.progress(`stores: skipped ${line}`);

      // One store at a time, its runs interleaved with its own baseline's, so both see the same conditions and no
      // other store's server competes for the CPUs meanwhile.
      const nextId = eventIds(tag);
      const results: LoadResult[] = [];
      const serverCounts = new Map<Backend, number>();
      for (const backend of backends) {
        let before: number | undefined;
        const progress = (line: string): void => bench.progress(`stores: ${backend.name}: ${line}`);
        results.push(
          ...(await measureLoad(candidates(backend), options, nextId, progress, async () => {
            before = await serverCalls(backend);
          })),
        );
        const after = await serverCalls(backend);
        if (before !== undefined && after !== undefined) serverCounts.set(backend, after - before);
      }
      return report(backends, results, options, skipped, serverCounts, servers);
    } finally {
      for (const backend of backends) {
        await backend
          .close()
          .catch((error: unknown) => bench.progress(`stores: closing ${backend.name} failed: ${String(error)}`));
      }
      await servers.stop();
    }
  },
};

/** The report's order, whatever order the stores ran in. */
const REPORT_ORDER: readonly BackendId[] = ['redis', 'postgres', 'sqlite', 'memory'];

function report(
  measured: readonly Backend[],
  results: readonly LoadResult[],
  options: LoadOptions,
  skipped: readonly string[],
  serverCounts: ReadonlyMap<Backend, number>,
  servers: { redis: Server; postgres: Server },
): string {
  const backends = [...measured].sort((a, b) => REPORT_ORDER.indexOf(a.id) - REPORT_ORDER.indexOf(b.id));
  const find = (backend: Backend, kind: 'store' | 'raw', inFlight: number): LoadResult | undefined =>
    results.find((result) => result.key === key(backend, kind) && result.inFlight === inFlight);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  /** The first error of each store whose runs failed (its runs were dropped, so it has no verdicts). */
  const failures = new Map<Backend, string>();

  for (const backend of backends) {
    for (const inFlight of IN_FLIGHT) {
      const store = find(backend, 'store', inFlight)!;
      const raw = find(backend, 'raw', inFlight);
      for (const failed of [store, raw]) {
        if (failed?.error && !failures.has(backend)) {
          failures.set(backend, `${inFlight} in flight, ${failed === raw ? 'baseline' : 'store'}: ${failed.error}`);
        }
      }
      let trips = perEvent(store.calls, store.ops);
      if (backend.id === 'sqlite') trips = `${trips} statements + ${perEvent(store.transactions, store.ops)} txn`;
      if (backend.id === 'memory') trips = '— (in process)';
      rows.push([
        backend.name,
        String(inFlight),
        int(store.opsPerSecond),
        raw ? int(raw.opsPerSecond) : '—',
        raw ? percent(store.opsPerSecond / raw.opsPerSecond) : '—',
        trips,
      ]);
    }
  }

  for (const [backend, error] of failures)
    verdicts.push(verdict(false, `${backend.name}: not measured, a run failed (${error})`));
  for (const backend of backends) {
    if (failures.has(backend)) continue;
    if (backend.id !== 'redis' && backend.id !== 'postgres') continue;
    const stores = IN_FLIGHT.map((inFlight) => find(backend, 'store', inFlight)!);
    const calls = stores.reduce((sum, result) => sum + result.calls, 0);
    const ops = stores.reduce((sum, result) => sum + result.ops, 0);
    const unit = backend.id === 'redis' ? 'commands (ioredis sendCommand)' : 'queries (pool.query)';
    const server = serverCounts.get(backend);
    const cross = server === undefined ? '' : `; Redis commandstats: ${perEvent(server, ops)} EVALSHA/EVAL per event`;
    verdicts.push(
      verdict(
        ops > 0 && calls === TARGET_ROUND_TRIPS * ops,
        `${backend.name}: ${perEvent(calls, ops)} round trips per event on the happy path, ${unit} over ${int(ops)} events` +
          `${cross} (target: exactly ${TARGET_ROUND_TRIPS})`,
      ),
    );
    const store = find(backend, 'store', 32)!;
    const raw = find(backend, 'raw', 32)!;
    const share = store.opsPerSecond / raw.opsPerSecond;
    verdicts.push(
      verdict(
        Number.isFinite(share) && share >= TARGET_RATIO,
        `${backend.name} at 32 in flight: ${int(store.opsPerSecond)} events/s = ${percent(share)} of the raw ` +
          `${int(raw.opsPerSecond)} ops/s (target: ≥ ${percent(TARGET_RATIO)})`,
      ),
    );
  }
  for (const backend of backends) {
    if (failures.has(backend)) continue;
    if (backend.id === 'sqlite') {
      const store = find(backend, 'store', 32)!;
      const raw = find(backend, 'raw', 32)!;
      verdicts.push(
        verdict(
          'info',
          `SQLite (in process, no round trips): ${perEvent(store.calls, store.ops)} statements and ` +
            `${perEvent(store.transactions, store.ops)} BEGIN IMMEDIATE transaction per event; ${percent(store.opsPerSecond / raw.opsPerSecond)} ` +
            `of the bare INSERT at 32 in flight (synchronous: deliveries never overlap)`,
        ),
      );
    }
    if (backend.id === 'memory') {
      const one = find(backend, 'store', 1)!;
      verdicts.push(
        verdict('info', `memory store: ${int(one.opsPerSecond)} events/s in process, the ceiling of any store`),
      );
    }
    if (backend.baseline) {
      const raws = IN_FLIGHT.map((inFlight) => find(backend, 'raw', inFlight)!);
      const calls = raws.reduce((sum, result) => sum + result.calls, 0);
      const ops = raws.reduce((sum, result) => sum + result.ops, 0);
      verdicts.push(
        verdict('info', `${backend.name} baseline: ${backend.baseline.label}, ${perEvent(calls, ops)} per op`),
      );
    }
  }
  for (const line of skipped) verdicts.push(verdict('skipped', line));

  const origin = (name: string, server: Server): string =>
    server.url === undefined || !backends.some((backend) => backend.name === name)
      ? `${name}: skipped`
      : server.external
        ? `${name}: given by URL`
        : `${name}: started for this run in ${int(server.startMs ?? 0)} ms${name === 'PostgreSQL' ? ' (fsync off)' : ''}`;
  const text = table(
    `Stores · happy path (claim → complete, fresh id) · median events/s of ${options.rounds} interleaved ` +
      `${options.roundMs} ms rounds`,
    ['store', 'in flight', 'events/s', 'baseline ops/s', 'ratio', 'round trips/event'],
    rows,
  );
  return [
    text,
    `  ${backends.map((backend) => backend.describe).join(' · ')}`,
    `  ${origin('Redis', servers.redis)} · ${origin('PostgreSQL', servers.postgres)}; all on 127.0.0.1, same host as the client`,
    'Verdicts',
    ...verdicts,
  ].join('\n');
}
