/**
 * The queue-mode fleet test's own PostgreSQL or Redis server, on a free 127.0.0.1 port and a data directory of its
 * own, durable (scripts/services: PostgreSQL commits synchronously, Redis appends every write to its AOF with fsync
 * always), so the test can stop it by PID in the middle of a run and start it again on the same port and data
 * directory with everything it acknowledged still there. The test run's shared server (testService) is left alone:
 * stopping it would disturb nothing but this file, yet its data directory is not ours to restart from.
 */
import { mkdir } from 'node:fs/promises';
import { postgres } from '../../scripts/services/postgres.js';
import { freePort } from '../../scripts/services/ports.js';
import type { RunningProcess } from '../../scripts/services/process.js';
import { redis } from '../../scripts/services/redis.js';
import type { ServiceDefinition } from '../../scripts/services/service.js';

export interface TestServer {
  url: string;
  readonly pid: number;
  /** The signal that stops it (for the watchdog, see rig.ts). */
  readonly stopSignal: NodeJS.Signals;
  /** Stops the server by its PID (PostgreSQL: immediate shutdown, SIGQUIT; Redis: SIGTERM), waits `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestServer(kind: 'postgres' | 'redis', dir: string): Promise<TestServer> {
  const definition: ServiceDefinition = kind === 'postgres' ? postgres : redis;
  const located = definition.locate();
  if (!located.ok) throw new Error(located.missing);
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const start = () => definition.start(located.binaries, dir, port, { durable: true });
  let { url, process } = await start();
  let current: RunningProcess | undefined = process;
  return {
    url,
    get pid() {
      return current?.pid ?? 0;
    },
    stopSignal: process.stopSignal,
    async restart(downMs) {
      await current?.stop();
      current = undefined;
      await new Promise((resolve) => setTimeout(resolve, downMs));
      ({ url, process } = await start());
      current = process;
    },
    async stop() {
      await current?.stop();
      current = undefined;
    },
  };
}
