import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A receiver process of the fleet. */
export interface Worker {
  url: string;
  pid: number;
  process: ChildProcess;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
}

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** Starts one receiver process and waits for its port. */
export function startWorker(env: Record<string, string>): Promise<Worker> {
  const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', WORKER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in 30 s: ${stderr.slice(0, 500)}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${stderr.slice(0, 500)}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /READY (\d+)/.exec(chunk.toString());
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url: `http://127.0.0.1:${match[1]}/webhooks/kyb`,
        pid: child.pid!,
        process: child,
        kill: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      });
    });
  });
}

/** Starts `count` receiver processes in parallel. */
export async function startFleet(count: number, env: Record<string, string>): Promise<Worker[]> {
  return Promise.all(Array.from({ length: count }, () => startWorker(env)));
}

/** One line of the handlers' ledger. */
export interface LedgerEntry {
  eventId: string;
  phase: 'start' | 'done';
  pid: number;
  at: number;
}

export function readLedger(path: string): LedgerEntry[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LedgerEntry);
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}
