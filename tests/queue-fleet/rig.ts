/**
 * One engine's setup for the queue-mode fleet test: its own durable server (server.ts), the engine prepared and opened
 * by the test too (for blockedStreams, skipBlocked and retryStream, as an operator would call them), the local KYB
 * service delivering to the HTTP receiver process, and the supervised fleet (processes.ts). stop() undoes all of it,
 * and kills every process by PID.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createTestSigner,
  randomSecret,
  startKybService,
  ulid,
  type KybService,
  type TestEnvelope,
  type TestSigner,
} from '@kyb-webhooks/testing';
import { allDone } from './checks.js';
import { openEngine, prepareEngine, type EngineEnv, type EngineName, type OpenedEngine } from './engines.js';
import { readLedger, record, writePlan, type Line, type Plan } from './ledger.js';
import { Fleet } from './processes.js';
import { startTestServer, type TestServer } from './server.js';

export const WORKERS = 4;

const REAPER = fileURLToPath(new URL('../../scripts/services/reaper.mjs', import.meta.url));

export interface Rig {
  engine: EngineName;
  service: KybService;
  server: TestServer;
  fleet: Fleet;
  /** The test's own handle on the engine (the operator's view). */
  opened: OpenedEngine;
  /** Signs like the service, with the endpoint's secret: for copies of deliveries sent by the test itself. */
  signer: TestSigner;
  ledger: string;
  /** Points the service at the receiver (connected: true) or at nothing: its events wait, in order, until reconnected. */
  connect(connected: boolean): void;
  /** Adds faults to the plan (before the events they target exist). */
  plan(faults: Plan): void;
  lines(): Line[];
  /** Appends a line of the test's own (the skip marker) to the ledger. */
  note(...words: (string | number)[]): void;
  /** Waits until `done()` holds; on timeout fails with `what` and the processes' last stderr lines. */
  until(what: string, done: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** Waits until a handler run of every event of `envelopes` finished (a `done` line). */
  processed(what: string, envelopes: readonly TestEnvelope[], timeoutMs?: number): Promise<void>;
  /**
   * Waits until the queue has no unfinished job: a scenario's events can all have finished runs while the job of one
   * whose worker died after its run is still to be run again (a duplicate); the next scenario must not meet it.
   */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A business stream of `count` wallet changes (attested events, seq 0…count-1), each appended by the service and
 * delivered at once; resolves with the stream's events in seq order.
 */
export async function walletStream(service: KybService, label: string, count: number): Promise<TestEnvelope[]> {
  const businessId = `biz_${label}_${ulid().toLowerCase()}`;
  for (let change = 0; change < count; change++) {
    await service.changeBusinessWallet({
      businessId,
      previous: `0x${label}${change}`,
      next: `0x${label}${change + 1}`,
    });
  }
  return [...service.request(businessId)!.events];
}

export async function startRig(engine: EngineName, kind: 'postgres' | 'redis'): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'kyb-queue-fleet-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as the postgres user, who must reach its data directory inside
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
  // If this process dies without its afterAll (vitest SIGKILLed), the watchdog of scripts/services stops the server
  // and the processes by PID and deletes the directory; the list it reads is kept current every half second.
  const processes: (() => { pid: number; signal: NodeJS.Signals }[])[] = [];
  const stateFile = join(dir, 'watchdog.json');
  const saveState = () =>
    writeFileSync(stateFile, JSON.stringify({ root: dir, servers: processes.flatMap((list) => list()) }));
  saveState();
  const watchdog = spawn(process.execPath, [REAPER, String(process.pid), stateFile], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
  const saving = setInterval(saveState, 500);
  saving.unref();
  cleanups.push(async () => {
    clearInterval(saving);
    if (watchdog.pid) process.kill(watchdog.pid, 'SIGKILL');
  });
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    const server = await startTestServer(kind, join(dir, 'server'));
    cleanups.push(() => server.stop());
    processes.push(() => (server.pid ? [{ pid: server.pid, signal: server.stopSignal }] : []));
    const env: EngineEnv = {
      KYB_ENGINE: engine,
      KYB_QUEUE_URL: server.url,
      KYB_NAMESPACE: `kyb_fleet_${ulid().toLowerCase().slice(-10)}`,
    };
    const opened = await openEngine(env, 'test', () => {});
    cleanups.push(() => opened.close());
    await prepareEngine(opened);

    const ledger = join(dir, 'ledger');
    const planFile = join(dir, 'plan.json');
    const plan: Plan = {};
    writePlan(planFile, plan);

    // Retries as the real service's schedule at 1/1000 (60 ms doubling, about 30 s in all: longer than a server
    // restart), and no quarantine: while a process restarts, every stream's deliveries fail at once.
    const service = await startKybService({ timeScale: 1e-3, quarantineAfter: 1_000_000, deliveryTimeoutMs: 15_000 });
    cleanups.push(() => service.stop());
    const secret = randomSecret();
    const fleet = new Fleet(
      {
        ...env,
        KYB_SECRET: secret,
        KYB_ATTESTATION_ISSUER: service.issuer,
        KYB_AUDIENCE: service.audience,
        KYB_JWKS_URL: service.jwksUrl,
        KYB_LEDGER: ledger,
        KYB_PLAN: planFile,
      },
      WORKERS,
    );
    cleanups.push(() => fleet.stop());
    processes.push(() => fleet.alive().map((entry) => ({ pid: entry.pid, signal: 'SIGKILL' as const })));
    await fleet.start();
    service.setEndpoint({ url: fleet.url, secrets: { '1': secret } });
    const signer = await createTestSigner({ secrets: { '1': secret } });

    const lines = () => readLedger(ledger);
    const until = async (
      what: string,
      done: () => boolean | Promise<boolean>,
      timeoutMs = 60_000,
      explain: () => string | Promise<string> = () => '',
    ) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await done())) {
        if (Date.now() > deadline) {
          const why = await Promise.resolve(explain()).catch((error: unknown) => `(no explanation: ${String(error)})`);
          throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}\n${why}${fleet.describe()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // What became of the events no run of which finished: their ledger lines, and the service's attempts.
    const missing = (envelopes: readonly TestEnvelope[]) => async () => {
      const all = lines();
      const described: string[] = [];
      for (const envelope of envelopes.filter((candidate) => !allDone(all, [candidate])).slice(0, 8)) {
        const own = all.filter((line) => line.eventId === envelope.event_id);
        const attempts = service
          .attempts(envelope.stream_id)
          .filter((attempt) => attempt.eventId === envelope.event_id)
          .map((attempt) => `${attempt.status ?? attempt.error} ${attempt.responseCode ?? ''}`);
        const key = own.find((line) => line.key)?.key;
        const job = key ? await opened.describeJob(key, envelope.stream_id).catch(String) : 'never enqueued';
        described.push(
          `${envelope.stream_id}#${envelope.seq} ${envelope.event_id}: service [${attempts.join(', ')}]\n    ${job}\n    ` +
            own
              .map((line) => `${line.index}: ${line.kind} ${line.result ?? ''} ${line.pid} ${line.attempt ?? ''}`)
              .join('\n    '),
        );
      }
      const blocked = await opened.queue.blockedStreams().catch(() => []);
      return `${described.join('\n')}\nblocked: ${JSON.stringify(blocked)}\n`;
    };
    return {
      engine,
      service,
      server,
      fleet,
      opened,
      signer,
      ledger,
      connect: (connected) => service.setEndpoint(connected ? { url: fleet.url, secrets: { '1': secret } } : undefined),
      plan(faults) {
        Object.assign(plan, faults);
        writePlan(planFile, plan);
      },
      lines,
      note: (...words) => record(ledger, ...words),
      until,
      processed: (what, envelopes, timeoutMs) =>
        until(what, () => allDone(lines(), envelopes), timeoutMs, missing(envelopes)),
      drained: () =>
        until('the queue has no unfinished job', async () => (await opened.unfinished().catch(() => 1)) === 0),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
