/**
 * Section B: the same endpoint under load in each framework, in a server process of its own: (a) a bare endpoint,
 * (b) the bare endpoint plus a node:crypto HMAC check, (c) our adapter (HMAC-only and attested events). Requests
 * per second and server CPU µs per request, medians of interleaved rounds.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SignedDelivery } from '@kyb-webhooks/testing';
import type { AutocannonRequest } from 'autocannon';
import { BENCH_NOW_MS, createBenchSigner, signPool, type EventKind } from '../fixtures.js';
import { median, medianInterval } from '../harness.js';
import { int, signedUs, table, us, verdict } from '../report.js';
import type { BenchOptions, Section } from '../section.js';
import { startServer, type ServerHandle } from './child.js';
import { freshHmacRequests, runLoad, toRequests, type LoadOptions, type LoadResult } from './load.js';
import { probe } from './probe.js';
import { FRAMEWORKS, VARIANTS, WEBHOOK_PATH, type Framework, type ServerConfig, type Variant } from './protocol.js';

const TARGET_EXTRA_CPU_US = 25;
const PACKAGES_DIR = fileURLToPath(new URL('../../../packages/', import.meta.url));

type RowId = 'bare' | 'hmac' | 'adapter-hmac' | 'adapter-attested';
interface Row {
  id: RowId;
  variant: Variant;
  kind: EventKind;
  label: string;
}
const ROWS: readonly Row[] = [
  { id: 'bare', variant: 'bare', kind: 'hmac', label: '(a) bare: raw body, 200' },
  { id: 'hmac', variant: 'hmac', kind: 'hmac', label: '(b) bare + node:crypto HMAC' },
  { id: 'adapter-hmac', variant: 'adapter', kind: 'hmac', label: '(c) kybWebhooks, HMAC-only' },
  { id: 'adapter-attested', variant: 'adapter-attested', kind: 'attested', label: '(c) kybWebhooks, attested' },
];

interface Settings extends LoadOptions {
  rounds: number;
  warmupS: number;
  attestedPool: number;
}

function settings(quick: boolean): Settings {
  // autocannon stops on its 1-second sampling tick, so durations are whole seconds. Many short rounds rather than
  // a few long ones: a single run on a shared machine can be off by ±30%, and the median of the per-round
  // differences needs rounds, not seconds, to settle (20 rounds give a 95% interval from the 6th to the 15th).
  // Express and Hono still cost far more per request in their first seconds than later, hence the long warm-up.
  return quick
    ? { rounds: 1, durationS: 1, warmupS: 1, connections: 10, attestedPool: 100 }
    : { rounds: 20, durationS: 1, warmupS: 4, connections: 10, attestedPool: 400 };
}

interface Target {
  framework: Framework;
  servers: Record<Variant, ServerHandle>;
}

async function startFramework(framework: Framework, config: ServerConfig, samples: SignedDelivery[]): Promise<Target | string> {
  if (!existsSync(`${PACKAGES_DIR}${framework}/src/index.ts`)) return `packages/${framework}/src/index.ts does not exist yet`;
  const started = await Promise.allSettled(VARIANTS.map((variant) => startServer(framework, variant, config)));
  const servers = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failed = started.flatMap((outcome) => (outcome.status === 'rejected' ? [String((outcome.reason as Error).message ?? outcome.reason)] : []));
  const problems = [...failed];
  for (const server of servers) {
    for (const problem of await probe(server, config.path, samples)) problems.push(`${server.variant}: ${problem}`);
  }
  if (problems.length > 0) {
    await Promise.all(servers.map((server) => server.close()));
    return problems.join('; ').split('\n')[0]!;
  }
  const byVariant = Object.fromEntries(servers.map((server) => [server.variant, server])) as Record<Variant, ServerHandle>;
  return { framework, servers: byVariant };
}

export const httpSection: Section = {
  name: 'http',
  title: 'B. HTTP (server per framework and endpoint, autocannon)',
  async run(bench: BenchOptions): Promise<string> {
    const s = settings(bench.quick);
    const signer = await createBenchSigner();
    bench.progress('http: signing the request pools');
    const pools: Record<EventKind, SignedDelivery[]> = {
      hmac: await signPool(signer, 'hmac', 1),
      attested: await signPool(signer, 'attested', s.attestedPool),
    };
    const requests: Record<EventKind, AutocannonRequest[]> = {
      hmac: freshHmacRequests(pools.hmac[0]!, signer, WEBHOOK_PATH, BENCH_NOW_MS),
      attested: toRequests(pools.attested, WEBHOOK_PATH),
    };
    const config: ServerConfig = {
      secrets: { ...signer.secrets },
      issuer: signer.issuer,
      audience: signer.audience,
      jwks: signer.jwks,
      path: WEBHOOK_PATH,
    };
    const samples = [pools.hmac[0]!, pools.attested[0]!];

    const targets: Target[] = [];
    const skipped: string[] = [];
    const results = new Map<string, LoadResult[]>();
    try {
      bench.progress(`http: starting ${FRAMEWORKS.length} × ${VARIANTS.length} servers`);
      const started = await Promise.all(FRAMEWORKS.map((framework) => startFramework(framework, config, samples)));
      for (const [i, target] of started.entries()) {
        if (typeof target === 'string') skipped.push(`${FRAMEWORKS[i]}: ${target}`);
        else targets.push(target);
      }
      const runOne = async (target: Target, row: Row, options: LoadOptions): Promise<LoadResult> =>
        runLoad(target.servers[row.variant], requests[row.kind], options);

      for (const target of targets) {
        bench.progress(`http: warming up ${target.framework}`);
        for (const row of ROWS) await runOne(target, row, { ...s, durationS: s.warmupS });
      }
      for (let round = 0; round < s.rounds; round++) {
        bench.progress(`http: round ${round + 1}/${s.rounds}`);
        for (const [t, target] of targets.entries()) {
          for (let k = 0; k < ROWS.length; k++) {
            // Rotated so that no endpoint always runs first (or right after the same neighbour).
            const row = ROWS[(k + round + t) % ROWS.length]!;
            const key = `${target.framework}:${row.id}`;
            const result = await runOne(target, row, s);
            results.set(key, [...(results.get(key) ?? []), result]);
            bench.progress(`http:   ${target.framework} ${row.label}: ${int(result.requestsPerSecond)} req/s, ${us(result.cpuMicrosPerRequest)} µs/req`);
          }
        }
      }
    } finally {
      await Promise.all(targets.flatMap((target) => Object.values(target.servers).map((server) => server.close())));
    }

    const series = (framework: Framework, id: RowId, pick: (result: LoadResult) => number): number[] =>
      (results.get(`${framework}:${id}`) ?? []).map(pick);
    const cpuPerRequest = (result: LoadResult): number => result.cpuMicrosPerRequest;
    // Δ against (b) per round, then the median: (b) and (c) of one round ran a few seconds apart, so load from
    // other processes on this machine cancels out better than in a difference of two medians.
    const deltas = (framework: Framework, id: RowId): number[] => {
      const base = series(framework, 'hmac', cpuPerRequest);
      return series(framework, id, cpuPerRequest).map((value, round) => value - base[round]!);
    };
    const interval = (values: number[]): string => {
      const found = medianInterval(values);
      return found ? `${signedUs(found.low)} … ${signedUs(found.high)}` : '';
    };
    const rows: string[][] = [];
    const verdicts: string[] = [];
    for (const { framework } of targets) {
      for (const row of ROWS) {
        const delta = row.id === 'hmac' ? undefined : deltas(framework, row.id);
        rows.push([
          row === ROWS[0] ? framework : '',
          row.label,
          int(median(series(framework, row.id, (result) => result.requestsPerSecond))),
          us(median(series(framework, row.id, cpuPerRequest))),
          delta ? signedUs(median(delta)) : '',
          delta ? interval(delta) : '',
        ]);
      }
      const extra = deltas(framework, 'adapter-hmac');
      const bounds = medianInterval(extra);
      // Judged on the interval, not the bare median: on a noisy machine a median alone flips between met and
      // missed from one run to the next, and a verdict that does so says nothing.
      const outcome = !bounds
        ? median(extra) <= TARGET_EXTRA_CPU_US
        : bounds.high <= TARGET_EXTRA_CPU_US
          ? true
          : bounds.low > TARGET_EXTRA_CPU_US
            ? false
            : 'unsure';
      verdicts.push(
        verdict(
          outcome,
          `B ${framework}: (c) HMAC-only costs ${signedUs(median(extra))} µs server CPU/request over (b)` +
            `${bounds ? ` (median of ${extra.length} rounds, 95% interval ${interval(extra)})` : ''}; target ≤ +${TARGET_EXTRA_CPU_US}`,
        ),
      );
    }
    for (const reason of skipped) verdicts.push(verdict('skipped', `B ${reason}`));

    const title =
      `HTTP · ${s.connections} connections · ${s.durationS} s per run · median of ${s.rounds} interleaved round${s.rounds > 1 ? 's' : ''} · ` +
      `bodies ${int(pools.hmac[0]!.body.byteLength)} B (HMAC-only) / ${int(pools.attested[0]!.body.byteLength)} B (attested)`;
    const notes = [
      'Notes',
      '  server CPU = process.cpuUsage() delta of the server process over the run ÷ requests completed (autocannon runs',
      '  in the bench process, sharing the 2 cores, so req/s is bounded by both; CPU µs/request is the figure to compare).',
      '  HMAC-only requests are each a new event (fresh event_id, signed by the load generator at the clock the server',
      '  also uses), and (c) runs createReceiver() as a user would, default memory store included, so every request does',
      `  the full claim/complete. Attested requests cycle ${int(s.attestedPool)} pre-signed deliveries, and that server's store claims`,
      '  each under its own key (event_id#n), so none is answered as a duplicate.',
      '  Servers import the built packages (dist), the code users install; the bench refuses a dist older than its sources.',
      '  Other processes on the machine move single runs by ±30%; the Δ column pairs (b) and (c) of the same round,',
      '  and its interval (distribution-free, for the median) says how far this run can be trusted: a verdict is',
      '  met or MISSED only when the whole interval is on one side of the target, otherwise unsure.',
    ];
    return [table(title, ['framework', 'endpoint', 'req/s', 'CPU µs/req', 'Δ CPU vs (b)', '95% interval of Δ'], rows), notes.join('\n'), ['Verdicts (HTTP)', ...verdicts].join('\n')].join('\n\n');
  },
};
