/**
 * Section D: streams (issue 12 §6). Per store, (1) what ordering enforce costs per event against ordering off on
 * in-order deliveries, in time and in store round trips, and (2) how fast a receiver backfills a 10,000-event stream
 * through the KYB API client against its own in-order throughput. Redis, PostgreSQL and MariaDB come from the store
 * section's servers.ts; SQLite and the memory store run in process.
 */
import { randomBytes } from 'node:crypto';
import { createBenchSigner } from '../fixtures.js';
import { int, ratio, signedUs, table, us, verdict } from '../report.js';
import type { Section } from '../section.js';
import { startServers, type Server } from '../stores/servers.js';
import {
  memoryBackend,
  mysqlBackend,
  postgresBackend,
  redisBackend,
  sqliteBackend,
  type StreamBackend,
} from './backends.js';
import {
  backfillOptions,
  createBackfillStream,
  measureBackfill,
  measurePaging,
  type BackfillOptions,
  type BackfillResult,
} from './backfill.js';
import { describeCalls, totalCalls } from './counting.js';
import { costOptions, measureOrderingCost, type CostResult, type Interval } from './ordering-cost.js';
import {
  backfillVerdict,
  extraRoundTrips,
  MAX_EXTRA_ROUND_TRIPS,
  MIN_BACKFILL_RATIO,
  roundTripsMet,
} from './verdicts.js';

async function open(
  name: string,
  server: Server,
  connect: (url: string) => Promise<StreamBackend>,
  skipped: string[],
): Promise<StreamBackend | undefined> {
  if (server.url === undefined) {
    skipped.push(server.skipReason);
    return undefined;
  }
  try {
    return await connect(server.url);
  } catch (error) {
    skipped.push(`${name}: could not connect or set up (${String((error as Error)?.message ?? error).split('\n')[0]})`);
    return undefined;
  }
}

export const streamSection: Section = {
  name: 'streams',
  title: 'D · streams: ordering enforce vs off per event, and backfill of a 10,000-event stream',
  async run(bench) {
    const cost = costOptions(bench.quick);
    const backfill = backfillOptions(bench.quick);
    const tag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
    const signer = await createBenchSigner();
    bench.progress(`streams: signing a stream of ${int(backfill.events)} attested events on the local KYB service`);
    const started = await Promise.allSettled([
      startServers(bench.progress, ['redis', 'postgres', 'mysql']),
      createBackfillStream(signer, backfill.events),
    ] as const);
    const [serversStarted, streamStarted] = started;
    if (serversStarted.status === 'rejected' || streamStarted.status === 'rejected') {
      // Stop whatever did start before giving up, so no server outlives the section.
      if (streamStarted.status === 'fulfilled') await streamStarted.value.stop().catch(() => {});
      if (serversStarted.status === 'fulfilled') await serversStarted.value.stop().catch(() => {});
      throw started.find((result) => result.status === 'rejected')!.reason;
    }
    const [servers, stream] = [serversStarted.value, streamStarted.value];
    const backends: StreamBackend[] = [];
    const skipped: string[] = [];
    try {
      const redis = await open('Redis', servers.redis, (url) => redisBackend(url, tag), skipped);
      const postgres = await open('PostgreSQL', servers.postgres, (url) => postgresBackend(url, tag), skipped);
      const mysql = await open('MariaDB', servers.mysql, (url) => mysqlBackend(url, tag), skipped);
      const sqlite = await open(
        'SQLite',
        { url: servers.root, external: false },
        (dir) => sqliteBackend(dir, tag),
        skipped,
      );
      // PostgreSQL last, as in the store section: its background work after a burst of writes (autovacuum, WAL
      // writer) would eat into the next store's figures on a 2-core machine.
      for (const backend of [memoryBackend(), sqlite, redis, mysql, postgres]) if (backend) backends.push(backend);
      for (const line of skipped) bench.progress(`streams: skipped ${line}`);

      bench.progress('streams: the API alone, paging through the stream');
      const paging = await measurePaging(stream, backfill.rounds);
      const costs: CostResult[] = [];
      const backfills: BackfillResult[] = [];
      const failures: string[] = [];
      // One store at a time, so no other store's server competes for the CPUs meanwhile.
      for (const backend of backends) {
        const progress = (part: string) => (line: string) =>
          bench.progress(`streams: ${backend.name}: ${part}: ${line}`);
        try {
          costs.push(await measureOrderingCost(backend, signer, cost, progress('ordering cost')));
        } catch (error) {
          failures.push(`${backend.name}, ordering cost: ${firstLine(error)}`);
        }
        try {
          backfills.push(await measureBackfill(backend, stream, signer, backfill, progress('backfill')));
        } catch (error) {
          failures.push(`${backend.name}, backfill: ${firstLine(error)}`);
        }
      }
      return report({
        backends,
        costs,
        backfills,
        paging,
        stream: { pageSize: stream.pageSize },
        backfill,
        skipped,
        failures,
        servers,
      });
    } finally {
      for (const backend of backends) {
        await backend
          .close()
          .catch((error: unknown) => bench.progress(`streams: closing ${backend.name} failed: ${String(error)}`));
      }
      await stream.stop().catch(() => {});
      await servers.stop();
    }
  },
};

const firstLine = (error: unknown): string => String((error as Error)?.message ?? error).split('\n')[0]!;

/** `1.23× [1.10× … 1.31×]`, or the median and `[—]` when the rounds are too few for a 95% interval. */
function withInterval(value: Interval, format: (x: number) => string): string {
  const ci =
    value.low !== undefined && value.high !== undefined ? ` [${format(value.low)} … ${format(value.high)}]` : ' [—]';
  return `${format(value.median)}${ci}`;
}

const perEvent = (value: number): string => value.toFixed(2);

interface ReportInput {
  backends: readonly StreamBackend[];
  costs: readonly CostResult[];
  backfills: readonly BackfillResult[];
  paging: Interval;
  stream: { pageSize: number };
  backfill: BackfillOptions;
  skipped: readonly string[];
  failures: readonly string[];
  servers: { redis: Server; postgres: Server; mysql: Server };
}

const CASE_LABELS = { continuing: 'stream under way', first: 'first event of a stream' } as const;

/** Round trips per event: two decimals, three when two would round a miss onto the target. */
function trips(value: number): string {
  const two = value.toFixed(2);
  return Math.abs(Number(two) - value) > 1e-9 && Number.isInteger(Number(two)) ? value.toFixed(3) : two;
}

function report(input: ReportInput): string {
  const { costs, backfills, backfill } = input;
  const costRounds = costs[0]?.rounds ?? 0;
  const costRows: string[][] = [];
  for (const result of costs) {
    const off = result.cases.off;
    for (const key of ['continuing', 'first'] as const) {
      const enforce = result.cases[key];
      costRows.push([
        key === 'continuing' ? result.backend.name : '',
        CASE_LABELS[key],
        us(off.us),
        us(enforce.us),
        withInterval(enforce.ratio, ratio),
        withInterval(enforce.diff, signedUs),
        `${trips(off.callsPerEvent)} → ${trips(enforce.callsPerEvent)}`,
        off.wirePerEvent !== undefined && enforce.wirePerEvent !== undefined
          ? `${trips(off.wirePerEvent)} → ${trips(enforce.wirePerEvent)} ${result.backend.wireLabel}`
          : '— (in process)',
      ]);
    }
  }
  const costTable = table(
    `Ordering cost · receive() of in-order deliveries (HMAC-only), one in flight · enforce vs off on the same store · ` +
      `median of ${costRounds} paired interleaved rounds [95% interval]`,
    [
      'store',
      'enforce case',
      'off µs/event',
      'enforce µs/event',
      'enforce / off',
      'enforce − off µs',
      'store calls/event off → enforce',
      'at the client',
    ],
    costRows,
    ['left', 'left'],
  );

  const backfillTable = table(
    `Backfill · a stream of ${int(backfill.events)} attested events; the receiver (enforce) gets seq ${int(backfill.events)} first ` +
      `and backfills 1…${int(backfill.events - 1)} through client.events (pages of ${input.stream.pageSize}) · vs the same ` +
      `receiver's in-order receive() of ${int(Math.min(backfill.inOrderEvents, backfill.events))} deliveries · median of ` +
      `${backfill.rounds} rounds, [95% interval]`,
    [
      'store',
      'backfill events/s',
      'answered after s',
      'in-order events/s',
      'backfill / in-order',
      'store calls/event backfill',
      'in-order',
    ],
    backfills.map((result) => [
      result.backend.name,
      withInterval(result.backfill, int),
      withInterval(result.answerMs, (ms) => (ms / 1000).toFixed(1)),
      withInterval(result.inOrder, int),
      withInterval(result.ratio, ratio),
      perEvent(totalCalls(result.backfillCalls)),
      perEvent(totalCalls(result.inOrderCalls)),
    ]),
  );

  const verdicts: string[] = [];
  for (const result of costs) {
    const off = result.cases.off;
    for (const key of ['continuing', 'first'] as const) {
      const enforce = result.cases[key];
      const extra = enforce.callsPerEvent - off.callsPerEvent;
      const wireExtra =
        enforce.wirePerEvent !== undefined && off.wirePerEvent !== undefined
          ? enforce.wirePerEvent - off.wirePerEvent
          : undefined;
      const worst = extraRoundTrips({
        calls: { off: off.callsPerEvent, enforce: enforce.callsPerEvent },
        ...(off.wirePerEvent !== undefined && enforce.wirePerEvent !== undefined
          ? { wire: { off: off.wirePerEvent, enforce: enforce.wirePerEvent } }
          : {}),
        inProcess: result.backend.wireLabel === 'statements',
      });
      verdicts.push(
        verdict(
          roundTripsMet(worst),
          `${result.backend.name}, ${CASE_LABELS[key]}: enforce adds ${trips(worst)} round trip${worst === 1 ? '' : 's'} per event ` +
            `(target ≤ ${MAX_EXTRA_ROUND_TRIPS}): store calls +${trips(extra)}` +
            (wireExtra !== undefined ? `, ${result.backend.wireLabel} at the client +${trips(wireExtra)}` : '') +
            `; off: ${describeCalls(off.calls)}; enforce: ${describeCalls(enforce.calls)}`,
        ),
      );
    }
  }
  for (const result of costs) {
    const { continuing, first } = result.cases;
    verdicts.push(
      verdict(
        'info',
        `${result.backend.name}: enforce costs ${withInterval(continuing.diff, signedUs)} µs per event on a stream under way, ` +
          `${withInterval(first.diff, signedUs)} µs on a stream's first event (${int(result.eventsPerRound)} events per round)`,
      ),
    );
  }
  for (const result of backfills) {
    const outcome = backfillVerdict(result.ratio);
    const why =
      result.ratio.low === undefined
        ? ` (too few rounds for a 95% interval: median ${ratio(result.ratio.median)})`
        : '';
    verdicts.push(
      verdict(
        outcome,
        `${result.backend.name}: backfill runs at ${withInterval(result.ratio, ratio)} of the in-order throughput ` +
          `(target ≥ ${ratio(MIN_BACKFILL_RATIO)})${why}`,
      ),
    );
  }
  verdicts.push(
    verdict(
      'info',
      `the API alone (client.events paging through the ${int(backfill.events)} events, no receiver): ` +
        `${withInterval(input.paging, int)} events/s; the service runs in this process, so its serving time counts in every backfill`,
    ),
  );
  for (const line of input.failures) verdicts.push(verdict(false, `failed: ${line}`));
  for (const line of input.skipped) verdicts.push(verdict('skipped', line));

  const origin = (name: string, server: Server): string =>
    server.url === undefined || !input.backends.some((backend) => backend.name === name)
      ? `${name}: skipped`
      : server.external
        ? `${name}: given by URL`
        : `${name}: started for this run in ${int(server.startMs ?? 0)} ms`;
  return [
    costTable,
    '',
    backfillTable,
    `  ${input.backends.map((backend) => backend.describe).join(' · ')}`,
    `  ${origin('Redis', input.servers.redis)} · ${origin('PostgreSQL', input.servers.postgres)} · ${origin('MariaDB', input.servers.mysql)}; ` +
      'all on 127.0.0.1, same host as the client',
    'Verdicts',
    ...verdicts,
  ].join('\n');
}
