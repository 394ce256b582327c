/**
 * Section F (issue 29 §4): queue mode on its two durable engines, pg-boss on PostgreSQL and BullMQ on Redis, both
 * started by ../stores/servers.ts on 127.0.0.1 and stopped by PID.
 *
 * 1. The answer (answer.ts): latency p50 / p99 and answers per second over real HTTP (node:http with
 *    `@kyb-webhooks/node`), queue mode against inline, the handler taking 50 ms; ratios queue / inline per round.
 * 2. The worker fleet (fleet.ts): events per second of 1 to 4 worker processes on a backlog over many streams, the
 *    handler taking 50 ms; ratios to one process per round, per engine, and what bounds each figure.
 *
 * Every child process (servers, workers) is killed by PID in `finally`.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { DEFAULT_WORKER_CONCURRENCY } from '@kyb-webhooks/core';
import { createBenchSigner } from '../fixtures.js';
import { WEBHOOK_PATH } from '../http/protocol.js';
import type { ReceiverConfig } from '../receiver.js';
import { int, ratio, table, verdict } from '../report.js';
import type { BenchOptions, Section } from '../section.js';
import { startServers } from '../stores/servers.js';
import { measureAnswers, type AnswerSample, type AnswerSettings } from './answer.js';
import { killChildren, startChild, type ChildHandle } from './child.js';
import { deliveryMaker, loadRequests } from './deliveries.js';
import { openQueue } from './engines.js';
import {
  fleetBound,
  idealRate,
  judgeScaling,
  roundRatios,
  SCALING_TARGET,
  summarize,
  type Summary,
} from './figures.js';
import { measureFleet, type FleetResult, type FleetSettings } from './fleet.js';
import {
  ENGINE_TITLE,
  HANDLER_MS,
  PG_BOSS_DEFAULT_POLLING_S,
  type ChildConfig,
  type EngineId,
  type QueueConfig,
  type ServerMode,
} from './protocol.js';
import { createQueueBenchReceiver } from './receiver.js';

interface Plan {
  answer: AnswerSettings;
  fleet: FleetSettings;
}

const STREAMS = 64;
/** No run comes near it: a 429 queue_full would stop the load run. */
const MAX_BACKLOG = 10_000_000;

function plan(quick: boolean): Plan {
  const fleet = {
    processes: [1, 2, 3, 4],
    concurrency: DEFAULT_WORKER_CONCURRENCY,
    handlerMs: HANDLER_MS,
    streams: STREAMS,
  };
  return quick
    ? {
        answer: { rounds: 2, durationS: 1, warmupS: 1, connections: 10 },
        fleet: { ...fleet, rounds: 1, warmupS: 0.5, windowS: 2 },
      }
    : {
        // 10 rounds: the 95% interval of a median is then the 2nd … 9th of 10 ratios; 6 rounds give min … max.
        answer: { rounds: 10, durationS: 3, warmupS: 3, connections: 10 },
        // The window is a whole number of pg-boss's polling intervals (2 s): its slots fetch in step, every interval,
        // so a window of 5 s counted 2 of their 2.5 fetch times and read 1.6 events/s per process for 2.0.
        fleet: { ...fleet, rounds: 6, warmupS: 1, windowS: 6 },
      };
}

const firstLine = (error: unknown): string => String((error as Error)?.message ?? error).split('\n')[0]!;

function intervalText(summary: Summary, format: (value: number) => string): string {
  return summary.interval ? `${format(summary.interval.low)} … ${format(summary.interval.high)}` : '—';
}

const ms = (value: number): string => (Number.isFinite(value) ? (value < 10 ? value.toFixed(1) : int(value)) : '—');
const modeLabel = (mode: ServerMode): string => (mode === 'inline' ? 'inline' : `queue, ${ENGINE_TITLE[mode]}`);

function answerReport(samples: Map<ServerMode, AnswerSample[]>, settings: AnswerSettings): string[] {
  const inline = samples.get('inline') ?? [];
  const rows: string[][] = [];
  const lines: string[] = [];
  for (const [mode, list] of samples) {
    const med = (pick: (sample: AnswerSample) => number) => summarize(list.map(pick)).median;
    const against = (pick: (sample: AnswerSample) => number) =>
      summarize(roundRatios(list.map(pick), inline.map(pick)));
    const throughput = against((sample) => sample.requestsPerSecond);
    const p50 = against((sample) => sample.p50Ms);
    const p99 = against((sample) => sample.p99Ms);
    const ratioCell = (summary: Summary) =>
      mode === 'inline' ? '' : `${ratio(summary.median)} (${intervalText(summary, ratio)})`;
    rows.push([
      modeLabel(mode),
      int(med((sample) => sample.requestsPerSecond)),
      ms(med((sample) => sample.p50Ms)),
      ms(med((sample) => sample.p99Ms)),
      int(med((sample) => sample.cpuMicrosPerRequest)),
      ratioCell(throughput),
      ratioCell(p50),
      ratioCell(p99),
    ]);
    if (mode !== 'inline') {
      lines.push(
        verdict(
          'info',
          `F1 ${ENGINE_TITLE[mode]}: queue / inline ${ratio(throughput.median)} answers/s, p50 ${ratio(p50.median)}, ` +
            `p99 ${ratio(p99.median)} (median of ${throughput.n} rounds${throughput.interval ? '' : ', no interval'})`,
        ),
      );
    }
  }
  const inlineCeiling = (settings.connections * 1000) / HANDLER_MS;
  return [
    table(
      `F1 · the answer over HTTP (node:http + @kyb-webhooks/node, ${settings.connections} connections, handler ${HANDLER_MS} ms; ` +
        `median of ${settings.rounds} rounds of ${settings.durationS} s, ratios per round with their 95% interval)`,
      [
        'mode',
        'answers/s',
        'p50 ms',
        'p99 ms',
        'server CPU µs/answer',
        'answers/s ÷ inline',
        'p50 ÷ inline',
        'p99 ÷ inline',
      ],
      rows,
    ),
    [
      `  Inline, every answer waits for the handler: ${settings.connections} connections ÷ ${HANDLER_MS} ms caps it at ` +
        `${int(inlineCeiling)} answers/s`,
      "  whatever the machine, so the throughput ratio says how much the sender's concurrency, not the CPU, held inline",
      "  back: it grows with the handler's time and shrinks with more connections.",
      '  In queue mode the server only verifies and enqueues (no worker runs in it); its answers/s is bound by the 2',
      '  shared cores it splits with autocannon and the database, so that figure (and its ratio) moves with the load of',
      '  the machine. The latency ratios are the firmer reading: 50 ms of handler against one enqueue round trip.',
    ].join('\n'),
    ...(lines.length > 0 ? [['Figures (F1)', ...lines].join('\n')] : []),
  ];
}

/** pg-boss's polling interval in this run, for its ceiling. */
function pgBossPollingS(): number {
  return Number(process.env['KYB_BENCH_PGBOSS_POLLING_S'] ?? PG_BOSS_DEFAULT_POLLING_S);
}

function fleetReport(results: Map<EngineId, FleetResult>, settings: FleetSettings): string[] {
  const rows: string[][] = [];
  const lines: string[] = [];
  const percent = (value: number): string => (Number.isFinite(value) ? `${Math.round(value * 100)}%` : '—');
  for (const [engine, result] of results) {
    const ofProcesses = (processes: number) =>
      result.samples.filter((sample) => sample.processes === processes).sort((a, b) => a.round - b.round);
    const base = ofProcesses(1).map((sample) => sample.eventsPerSecond);
    const bounds: string[] = [];
    for (const processes of settings.processes) {
      const list = ofProcesses(processes);
      const rate = summarize(list.map((sample) => sample.eventsPerSecond));
      const ideal = idealRate(processes, settings.concurrency, settings.handlerMs);
      const scaling = summarize(
        roundRatios(
          list.map((sample) => sample.eventsPerSecond),
          base,
        ),
      );
      const busy = summarize(list.map((sample) => sample.machineBusy));
      const share = summarize(list.map((sample) => sample.runShare));
      const cpu = summarize(list.map((sample) => sample.workerCpuMicrosPerEvent));
      const left = Math.min(...list.map((sample) => sample.backlogLeft));
      const bound = fleetBound(rate.median, ideal, busy.median);
      bounds.push(`${processes}: ${bound}`);
      rows.push([
        ENGINE_TITLE[engine],
        String(processes),
        `${rate.median.toFixed(1)}${left < processes * settings.concurrency ? ' (ran dry)' : ''}`,
        intervalText(rate, (value) => value.toFixed(1)),
        int(ideal),
        percent(rate.median / ideal),
        ms((processes * settings.concurrency * 1000) / rate.median),
        processes === 1 ? '' : `${ratio(scaling.median)} (${intervalText(scaling, ratio)})`,
        int(cpu.median),
        percent(busy.median),
        percent(share.median),
        bound,
      ]);
      if (processes > 1) {
        const judged = judgeScaling(scaling, processes, bound);
        const why =
          judged === 'unsure' && !scaling.interval
            ? `; ${scaling.n} round${scaling.n === 1 ? '' : 's'}: no interval`
            : judged === 'unsure' && bound === 'cpu'
              ? '; the cores were full (this machine cannot carry a verdict here)'
              : '';
        lines.push(
          verdict(
            judged,
            `F2 ${ENGINE_TITLE[engine]}: ${processes} processes run ${ratio(scaling.median)} one process's events/s ` +
              `(95% interval ${intervalText(scaling, ratio)}); target ≥ ${ratio(SCALING_TARGET * processes)}, bound by ${bound}${why}`,
          ),
        );
      }
    }
    lines.push(verdict('info', `F2 ${ENGINE_TITLE[engine]}: bound by ${bounds.join(', ')} (processes: bound)`));
    const { order } = result;
    const wrong = order.repeated + order.early;
    lines.push(
      verdict(
        wrong === 0,
        `F2 ${ENGINE_TITLE[engine]}: ${int(result.handled)} events handled, each stream's in seq order and none twice` +
          (wrong === 0
            ? ''
            : ` MISSED: ${order.repeated} repeated, ${order.early} ahead of an earlier one (${order.examples.join('; ')})`),
      ),
    );
  }
  return [
    table(
      `F2 · the worker fleet (1 to 4 processes × concurrency ${settings.concurrency}, handler ${settings.handlerMs} ms, ` +
        `${settings.streams} streams; ${settings.windowS} s window after ${settings.warmupS} s, median of ${settings.rounds} ` +
        `round${settings.rounds > 1 ? 's' : ''}, ratios per round with their 95% interval)`,
      [
        'engine',
        'processes',
        'events/s',
        '95% interval',
        'ideal',
        'of ideal',
        'ms/job/slot',
        '÷ 1 process',
        'worker CPU µs/event',
        'machine busy',
        'this run',
        'bound by',
      ],
      rows,
    ),
    [
      `  ideal = processes × concurrency × 1000 ÷ ${settings.handlerMs} ms: the rate if only the handler's time bounded the`,
      '  fleet. The handler sleeps, so 4 processes on 2 cores can reach it: a process holds 4 slots that wait, not 4',
      `  cores. ms/job/slot = slots ÷ events/s: what one job holds a slot for (${settings.handlerMs} ms of handler, the rest`,
      "  the engine's fetch and settle; a slot that found a job fetches the next at once, on both engines).",
      '  "machine busy" is all of the machine (other work included); "this run" the share used by the bench process and',
      '  everything it started (database servers, workers). bound by: handler = at least 90% of ideal (the engine keeps',
      '  cpu = the machine was at least 90% busy (the cores were full: a quieter or larger machine may carry more, so a',
      "  figure below the target is this machine's, not the engine's); engine = neither: the engine's round trips per",
      '  job. "(ran dry)": the backlog was nearly empty at the window\'s end, the fleet had little left to do: a floor.',
    ].join('\n'),
    ...(lines.length > 0 ? [['Verdicts (F2)', ...lines].join('\n')] : []),
  ];
}

export const queueSection: Section = {
  name: 'queue',
  title:
    'F · queue mode: the answer (queue vs inline over HTTP) and the worker fleet (1 to 4 processes), pg-boss and BullMQ',
  async run(bench: BenchOptions): Promise<string> {
    const { answer: answerSettings, fleet: fleetSettings } = plan(bench.quick);
    const tag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
    const signer = await createBenchSigner();
    const receiverConfig: ReceiverConfig = {
      secrets: { ...signer.secrets },
      issuer: signer.issuer,
      audience: signer.audience,
      jwks: signer.jwks,
    };
    const queueConfig = (engine: EngineId, url: string, name: string): QueueConfig => ({
      engine,
      url,
      name,
      namespace: engine === 'pgboss' ? `kybbench_${tag}` : `kybbench-${tag}`,
      maxBacklog: MAX_BACKLOG,
      ...(engine === 'pgboss' && process.env['KYB_BENCH_PGBOSS_POLLING_S']
        ? { pollingIntervalSeconds: pgBossPollingS() }
        : {}),
    });
    const skipped: string[] = [];
    const failures: string[] = [];
    const describes: string[] = [];
    const servers = await startServers(bench.progress, ['redis', 'postgres']);
    try {
      const urls = new Map<EngineId, string>();
      if (servers.postgres.url !== undefined) urls.set('pgboss', servers.postgres.url);
      else skipped.push(`pg-boss: ${servers.postgres.skipReason}`);
      if (servers.redis.url !== undefined) urls.set('bullmq', servers.redis.url);
      else skipped.push(`BullMQ: ${servers.redis.skipReason}`);
      // Installs pg-boss's schema and creates the queues once, before any child opens them at the same time.
      for (const [engine, url] of [...urls]) {
        try {
          for (const name of ['answer', 'fleet']) {
            const opened = await openQueue(queueConfig(engine, url, name));
            if (name === 'fleet') describes.push(opened.describe);
            await opened.close();
          }
        } catch (error) {
          failures.push(`${ENGINE_TITLE[engine]}: could not open its queue: ${firstLine(error)}`);
          urls.delete(engine);
        }
      }

      // F1: the answer over HTTP.
      const report: string[] = [];
      const answerServers = new Map<ServerMode, ChildHandle>();
      try {
        bench.progress('queue: answers: starting the servers');
        const modes: ServerMode[] = ['inline', ...urls.keys()];
        for (const mode of modes) {
          const config: ChildConfig = {
            receiver: receiverConfig,
            handlerMs: HANDLER_MS,
            ...(mode === 'inline' ? {} : { queue: queueConfig(mode, urls.get(mode)!, 'answer') }),
          };
          try {
            answerServers.set(mode, await startChild('server.ts', [mode], `${mode} server`, config));
          } catch (error) {
            failures.push(`F1 ${modeLabel(mode)} server: ${firstLine(error)}`);
          }
        }
        if (answerServers.has('inline') && answerServers.size > 1) {
          const requests = loadRequests(deliveryMaker(signer, `${tag}a`, STREAMS), WEBHOOK_PATH);
          const samples = await measureAnswers(answerServers, requests, answerSettings, bench.progress);
          report.push(...answerReport(samples, answerSettings));
        }
      } catch (error) {
        failures.push(`F1: ${firstLine(error)}`);
      } finally {
        await Promise.all([...answerServers.values()].map((server) => server.close()));
      }

      // F2: the worker fleet, one engine at a time.
      const fleets = new Map<EngineId, FleetResult>();
      for (const [engine, url] of urls) {
        const progress = (line: string): void =>
          bench.progress(`${line.replace('queue: ', `queue: ${ENGINE_TITLE[engine]}: `)}`);
        const config: ChildConfig = {
          receiver: receiverConfig,
          handlerMs: HANDLER_MS,
          queue: queueConfig(engine, url, 'fleet'),
        };
        const workers: ChildHandle[] = [];
        const opened = await openQueue(config.queue!).catch((error: unknown) => {
          failures.push(`F2 ${ENGINE_TITLE[engine]}: ${firstLine(error)}`);
          return undefined;
        });
        if (!opened) continue;
        try {
          progress(`queue: fleet: starting ${Math.max(...fleetSettings.processes)} worker processes`);
          for (let i = 1; i <= Math.max(...fleetSettings.processes); i++) {
            workers.push(await startChild('worker.ts', [], `${ENGINE_TITLE[engine]} worker #${i}`, config));
          }
          const receiver = createQueueBenchReceiver(receiverConfig, HANDLER_MS, opened.queue);
          const make = deliveryMaker(signer, `${tag}f${engine}`, STREAMS);
          fleets.set(
            engine,
            await measureFleet(workers, { receiver, queue: opened.queue }, make, fleetSettings, progress),
          );
        } catch (error) {
          failures.push(`F2 ${ENGINE_TITLE[engine]}: ${firstLine(error)}`);
        } finally {
          await Promise.all(workers.map((worker) => worker.close()));
          await opened.close().catch(() => {});
        }
      }
      if (fleets.size > 0) report.push(...fleetReport(fleets, fleetSettings));

      const footer = [
        `Machine: ${availableParallelism()} CPUs shared with other work; wall-clock moves 2–3× between runs, so only the`,
        "  ratios taken within a round are figures to compare, and a verdict on absolute rates is not this machine's to give.",
        `Engines: ${describes.join('; ')};`,
        `  options at their defaults except maxBacklog (${int(MAX_BACKLOG)}, so no run answers 429).`,
        "Servers: the test harness's (scripts/services/) on 127.0.0.1: PostgreSQL with fsync and synchronous_commit off,",
        "  Redis without persistence; an enqueue there costs less than on a durable server, so queue mode's latency is a",
        '  floor. Each receiver uses the default memory store (its dedupe and claims cost no round trip).',
        `Deliveries: HMAC-only kyb.data_request.pending_approval, each a new event, over ${STREAMS} streams in turn, signed on the`,
        "  bench's pinned clock; the fleet's backlog is enqueued through receiver.receive() in the bench process.",
      ];
      return [
        ...report,
        ...(failures.length > 0 ? [['Failures', ...failures.map((line) => verdict(false, line))].join('\n')] : []),
        ...(skipped.length > 0 ? [['Skipped', ...skipped.map((line) => verdict('skipped', line))].join('\n')] : []),
        footer.join('\n'),
      ].join('\n\n');
    } finally {
      await killChildren();
      await servers.stop();
    }
  },
};
