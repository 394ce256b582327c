import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, createReceiver, type DedupeStore, type Receiver } from '@kyb-webhooks/core';
import { createSqliteStore } from '@kyb-webhooks/store-sql/sqlite';
import { createTestSigner, startJwksServer } from '@kyb-webhooks/testing';
import { registerDemoHandlers } from './handlers.js';
import { formatScenarioTable, runDemoScenario, type DemoApp, type ScenarioRow } from './scenario.js';
import { runStreamScenario, type StreamScenarioResult } from './streams.js';

/** A running example app: the webhook URL and how to stop it. */
export interface ServedApp {
  url: string;
  close(): Promise<void>;
}

/** Where the demo keeps processed event ids: in memory (lost on restart) or in a SQLite file (kept). */
export type DemoStore = 'memory' | 'sqlite';

/** What the demo showed: the deliveries table and the streams part. */
export interface DemoResult {
  rows: ScenarioRow[];
  streams: StreamScenarioResult;
}

/**
 * The README's demo for one framework: starts the example app on 127.0.0.1 with a test JWKS server and a test
 * signer standing in for the service, plays the scenario (including a restart of the app) and prints what happened
 * to each delivery. With `sqlite`, dedupe lives in a file and survives the restart; with `memory` it does not.
 * Then the streams part: the test kit's local KYB service delivers to the app with its retries, order and
 * quarantine, and the app's receiver enforces each stream's order (a gap backfilled, a quarantine recovered).
 *
 * @example
 * ```ts
 * const { rows, streams } = await runDemo('Express', (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')))
 * ```
 */
export async function runDemo(
  framework: string,
  serve: (receiver: Receiver) => Promise<ServedApp>,
  storeKind: DemoStore = parseStore(process.argv.slice(2)),
  print: (text: string) => void = console.log,
): Promise<DemoResult> {
  const signer = await createTestSigner();
  const jwks = await startJwksServer(signer.jwks);
  const file = join(tmpdir(), `kyb-webhooks-demo-${process.pid}.sqlite`);
  const closers: (() => Promise<void>)[] = [];

  async function openStore(): Promise<DedupeStore> {
    if (storeKind !== 'sqlite') return createMemoryStore(); // a restarted process starts with an empty memory
    const sqlite = createSqliteStore({ filename: file });
    await sqlite.ensureSchema();
    closers.push(() => sqlite.close());
    return sqlite;
  }

  // Each start is a fresh process as far as the app can tell: a new receiver and a new store object. Only what the
  // store keeps outside the process (the SQLite file) carries over.
  async function start(): Promise<DemoApp> {
    const store = await openStore();
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwks.url },
      store,
    });
    const activity = registerDemoHandlers(receiver);
    const app = await serve(receiver);
    closers.push(() => app.close());
    return { url: app.url, activity };
  }

  try {
    const first = await start();
    print(
      `${framework} example on ${first.url} (${storeKind === 'sqlite' ? `SQLite store in ${file}` : 'memory store'}); the service is played by the test kit.\n`,
    );
    const rows = await runDemoScenario({
      app: first,
      signer,
      restart: async () => {
        for (const close of closers.splice(0)) await close();
        return start();
      },
    });
    print(formatScenarioTable(rows));
    print(
      storeKind === 'sqlite'
        ? '\nThe SQLite store kept the processed event ids across the restart, so the redelivered release was a duplicate.'
        : '\nThe memory store forgot the processed event ids on restart, so the release ran again. Run `npm run demo -- ' +
            `${framework.toLowerCase()} sqlite\` to see a durable store keep them.`,
    );

    print(
      "\nStreams: the local KYB service delivers with its retries, order and quarantine; the receiver enforces each stream's order.\n",
    );
    const streams = await runStreamScenario({ serve, store: await openStore() });
    print(formatScenarioTable(streams.rows));
    print(
      streams.inOrder
        ? `\nNothing lost: each of the ${streams.events} events of the ${streams.streams} streams ran once, in seq order.`
        : '\nSome stream did not run completely, once, in order: see the table above.',
    );
    return { rows, streams };
  } finally {
    for (const close of closers.splice(0)) await close();
    await jwks.close();
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
  }
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
