/**
 * Starts the queue section's child processes (server.ts, worker.ts) and talks to them over IPC. Every child started
 * is remembered until it exited: `killChildren()` ends the ones left by PID (the section calls it in `finally`), and
 * an 'exit' handler does the same if the bench process ends first.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BENCH_NOW_MS } from '../fixtures.js';
import type { ChildConfig, ChildMessage, Handled, ParentMessage } from './protocol.js';

const BENCH_DIR = fileURLToPath(new URL('../../', import.meta.url));
const START_TIMEOUT_MS = 60_000;
const COMMAND_TIMEOUT_MS = 60_000;

const running = new Set<ChildProcess>();
const killLeft = (): void => {
  for (const child of running)
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
};
process.on('exit', killLeft);

/** Kills (SIGKILL, by PID) every child of this section still running; resolves once they exited. */
export async function killChildren(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
        }),
    ),
  );
  running.clear();
}

export interface ChildHandle {
  label: string;
  pid: number;
  /** server.ts: the port it listens on. */
  port: number;
  /** process.cpuUsage() of the child, user + system, in µs. */
  cpuMicros(): Promise<number>;
  /** Sends `message` and resolves on the child's `reply`; rejects on an error message or after a minute. */
  command(message: ParentMessage, reply: 'started' | 'stopped'): Promise<void>;
  /** worker.ts: called with every batch of handled events. */
  onHandled(listener: (events: Handled[]) => void): void;
  /** Disconnects (the child closes its clients and exits), then kills it by PID if it is still there after 10 s. */
  close(): Promise<void>;
}

export async function startChild(
  file: 'server.ts' | 'worker.ts',
  args: string[],
  label: string,
  config: ChildConfig,
): Promise<ChildHandle> {
  const child: ChildProcess = fork(fileURLToPath(new URL(`./${file}`, import.meta.url)), args, {
    cwd: BENCH_DIR,
    // The built packages (dist), as the HTTP section's servers: tsx only runs the bench's own TypeScript.
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, KYB_BENCH_QUEUE: JSON.stringify(config), KYB_BENCH_NOW_MS: String(BENCH_NOW_MS) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const failure = (reason: string): Error =>
    new Error(`${label}: ${reason}${stderr.trim() ? `\n${stderr.trim()}` : ''}`);

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no answer within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    function fail(reason: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(failure(reason));
    }
    child.on('message', function onMessage(message: ChildMessage) {
      if (message.type === 'ready') {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.removeAllListeners('exit');
        child.once('exit', () => running.delete(child));
        resolve(message.port ?? 0);
      } else if (message.type === 'error') {
        fail(message.message);
      }
    });
    child.once('exit', (code) => fail(`exited with ${code}`));
  });

  let nextId = 0;
  const cpuWaiting = new Map<number, (micros: number) => void>();
  const replyWaiting: { reply: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  const handledListeners: ((events: Handled[]) => void)[] = [];
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'cpu') {
      cpuWaiting.get(message.id)?.(message.user + message.system);
      cpuWaiting.delete(message.id);
    } else if (message.type === 'handled') {
      for (const listener of handledListeners) listener(message.events);
    } else if (message.type === 'started' || message.type === 'stopped') {
      const index = replyWaiting.findIndex((waiting) => waiting.reply === message.type);
      if (index >= 0) replyWaiting.splice(index, 1)[0]!.resolve();
    } else if (message.type === 'error') {
      for (const waiting of replyWaiting.splice(0)) waiting.reject(failure(message.message));
    }
  });
  child.on('exit', (code, signal) => {
    for (const waiting of replyWaiting.splice(0)) waiting.reject(failure(`exited (${code ?? signal})`));
  });

  return {
    label,
    pid: child.pid!,
    port,
    cpuMicros() {
      const id = ++nextId;
      return new Promise((resolve) => {
        cpuWaiting.set(id, resolve);
        child.send({ type: 'cpu', id } satisfies ParentMessage);
      });
    },
    command(message, reply) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(failure(`no '${reply}' within ${COMMAND_TIMEOUT_MS / 1000} s`)),
          COMMAND_TIMEOUT_MS,
        );
        replyWaiting.push({
          reply,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.send(message);
      });
    },
    onHandled(listener) {
      handledListeners.push(listener);
    },
    close() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.disconnect();
        setTimeout(() => {
          if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
        }, 10_000).unref();
      });
    },
  };
}
