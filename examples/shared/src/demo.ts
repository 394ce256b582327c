import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMemoryStore,
  createReceiver,
  type DedupeStore,
  type EventQueue,
  type Receiver,
} from '@kyb-webhooks/core';
import { createSqliteStore } from '@kyb-webhooks/store-sql/sqlite';
import { createTestSigner, startJwksServer } from '@kyb-webhooks/testing';
import { registerDemoHandlers } from './handlers.js';
import { openQueue, queueFlag, startWorker, trackQueue, type QueueEngine } from './queue.js';
import { formatScenarioTable, runDemoScenario, type DemoApp, type ScenarioRow } from './scenario.js';
import { runStreamScenario, type StreamScenarioResult } from './streams.js';

/** A running example app: the webhook URL and how to stop it. */
export interface ServedApp {
  url: string;
  close(): Promise<void>;
}

/** Where the demo keeps processed event ids: in memory (lost on restart) or in a SQLite file (kept). */
export type DemoStore = 'memory' | 'sqlite';

/** How the demo runs: its store, and with `queue` in queue mode (a worker in the same process runs the handlers). */
export interface DemoOptions {
  store?: DemoStore;
  queue?: QueueEngine;
}

/** What the demo showed: the deliveries table and the streams part. */
export interface DemoResult {
  rows: ScenarioRow[];
  streams: StreamScenarioResult;
  /** Queue mode: the event_id of each job the worker ran handlers for in the deliveries part, in the order they ran. */
  jobs: string[];
}

/**
 * The README's demo for one framework: starts the example app on 127.0.0.1 with a test JWKS server and a test
 * signer standing in for the service, plays the scenario (including a restart of the app) and prints what happened
 * to each delivery. With `sqlite`, dedupe lives in a file and survives the restart; with `memory` it does not.
 * Then the streams part: the test kit's local KYB service delivers to the app with its retries, order and
 * quarantine, and the app's receiver enforces each stream's order (a gap backfilled, a quarantine recovered).
 * With `queue` (`--queue` on the command line), the same in queue mode: every verified delivery is answered
 * `200 queued`, and a worker in the same process then runs the handlers; each row shows what it ran.
 *
 * @example
 * ```ts
 * const { rows, streams } = await runDemo('Express', (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')))
 * ```
 */
export async function runDemo(
  framework: string,
  serve: (receiver: Receiver) => Promise<ServedApp>,
  options: DemoStore | DemoOptions = parseArgs(process.argv.slice(2)),
  print: (text: string) => void = console.log,
): Promise<DemoResult> {
  const { store: storeKind = 'memory', queue: engine } = typeof options === 'string' ? { store: options } : options;
  const signer = await createTestSigner();
  const jwks = await startJwksServer(signer.jwks);
  const file = join(tmpdir(), `kyb-webhooks-demo-${process.pid}.sqlite`);
  const closers: (() => Promise<void>)[] = [];
  const jobs: string[] = [];
  let queueName = 'the memory queue';
  let durability = '';

  async function openStore(): Promise<DedupeStore> {
    if (storeKind !== 'sqlite') return createMemoryStore(); // a restarted process starts with an empty memory
    const sqlite = createSqliteStore({ filename: file });
    await sqlite.ensureSchema();
    closers.push(() => sqlite.close());
    return sqlite;
  }

  /**
   * Queue mode: the engine (a new memory queue per start, as a restarted process has), wrapped so the scenario can
   * wait for the worker; the store is the engine's own with pg-boss and BullMQ.
   */
  async function openDemoQueue(
    name: string,
  ): Promise<{ queue: EventQueue; store: DedupeStore | undefined; settled: () => Promise<void> } | undefined> {
    if (!engine) return undefined;
    const opened = await openQueue(engine, process.env, name);
    closers.push(() => opened.close());
    ({ description: queueName, durability } = opened);
    const tracked = trackQueue(opened.queue);
    return { queue: tracked.queue, store: opened.store, settled: () => tracked.idle() };
  }

  /** In queue mode: a worker for `receiver`, in this process, stopped (its running jobs finished) before the app. */
  async function startDemoWorker(receiver: Receiver): Promise<void> {
    receiver.onAny((event, context) => {
      if (context.job) jobs.push(event.event_id);
    });
    const worker = await startWorker(receiver);
    closers.push(() => worker.stop());
  }

  // Each start is a fresh process as far as the app can tell: a new receiver and a new store object. Only what the
  // store keeps outside the process (the SQLite file) carries over.
  async function start(): Promise<DemoApp> {
    const queued = await openDemoQueue('kyb-webhooks-demo');
    const store = queued?.store ?? (await openStore());
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwks.url },
      store,
      ...(queued ? { queue: queued.queue } : {}),
    });
    const activity = registerDemoHandlers(receiver);
    if (queued) await startDemoWorker(receiver);
    const app = await serve(receiver);
    closers.push(() => app.close());
    return { url: app.url, activity, ...(queued ? { settled: queued.settled } : {}) };
  }

  try {
    const first = await start();
    const storeText =
      storeKind === 'sqlite' && (engine ?? 'memory') === 'memory' ? `SQLite store in ${file}` : 'memory store';
    print(
      engine
        ? `${framework} example on ${first.url} in queue mode: ${queueName}, a worker in this process${engine === 'memory' ? `, ${storeText}` : ''}; the service is played by the test kit.\n`
        : `${framework} example on ${first.url} (${storeText}); the service is played by the test kit.\n`,
    );
    const rows = await runDemoScenario({
      app: first,
      signer,
      restart: async () => {
        for (const close of closers.splice(0).reverse()) await close();
        return start();
      },
    });
    const deliveryJobs = [...jobs];
    print(formatScenarioTable(rows, engine ? 'what the worker then ran' : undefined));
    if (engine) print(`\n${queueModeSummary(rows, deliveryJobs.length, storeKind, engine, durability)}`);
    else
      print(
        storeKind === 'sqlite'
          ? '\nThe SQLite store kept the processed event ids across the restart, so the redelivered release was a duplicate.'
          : '\nThe memory store forgot the processed event ids on restart, so the release ran again. Run `npm run demo -- ' +
              `${framework.toLowerCase()} sqlite\` to see a durable store keep them.`,
      );

    print(
      `\nStreams: the local KYB service delivers with its retries, order and quarantine; the ${engine ? 'worker' : 'receiver'} enforces each stream's order.\n`,
    );
    const streamQueue = await openDemoQueue('kyb-webhooks-demo-streams');
    const streams = await runStreamScenario({
      serve,
      store: streamQueue?.store ?? (await openStore()),
      ...(streamQueue ? { queue: streamQueue.queue, settled: streamQueue.settled, startWorker: startDemoWorker } : {}),
    });
    print(formatScenarioTable(streams.rows, engine ? 'what the worker then ran' : undefined));
    print(
      streams.inOrder
        ? `\nNothing lost: each of the ${streams.events} events of the ${streams.streams} streams ran once, in seq order${engine ? ', in the worker' : ''}.`
        : '\nSome stream did not run completely, once, in order: see the table above.',
    );
    return { rows, streams, jobs: deliveryJobs };
  } finally {
    for (const close of closers.splice(0).reverse()) await close();
    await jwks.close();
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
  }
}

/** What queue mode showed, under the table. */
function queueModeSummary(
  rows: readonly ScenarioRow[],
  jobsRun: number,
  storeKind: DemoStore,
  engine: QueueEngine,
  durability: string,
): string {
  const queued = rows.filter((row) => row.code === 'queued').length;
  const restart =
    engine !== 'memory'
      ? 'The restarted app found the release in the queue (200 duplicate): the queue and its store outlived the process.'
      : storeKind === 'sqlite'
        ? 'After the restart the new memory queue took the release again (200 queued), and the worker found it processed in the SQLite store: its handler did not run again.'
        : 'The restart lost the memory queue and the memory store, so the release was queued and ran again.';
  return [
    `${queued} deliveries were answered 200 queued as soon as the queue held them, without waiting for a handler. The worker then took the ${queued} jobs and ran the handlers of ${jobsRun} events, each once (the last column, read once the queue was drained).`,
    'A copy of a queued event was answered 200 duplicate by the queue; refused deliveries were never enqueued.',
    restart,
    durability,
  ].join('\n');
}

function parseArgs(args: readonly string[]): DemoOptions {
  const queue = queueFlag(args);
  return { store: parseStore(args), ...(queue ? { queue } : {}) };
}

function parseStore(args: readonly string[]): DemoStore {
  return args.includes('sqlite') ? 'sqlite' : 'memory';
}

/** Waits for a Node HTTP server on 127.0.0.1 (port 0 = a free one) and describes it as a {@link ServedApp}. */
export async function listening(server: Server, path = '/webhooks/kyb'): Promise<ServedApp> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
