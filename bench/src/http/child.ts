/** Starts a bench server process and talks to it over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BENCH_NOW_MS } from '../fixtures.js';
import type { Framework, ParentMessage, ServerConfig, ServerMessage, Variant } from './protocol.js';

const SERVER_FILE = fileURLToPath(new URL('./server.ts', import.meta.url));
const BENCH_DIR = fileURLToPath(new URL('../../', import.meta.url));
const START_TIMEOUT_MS = 60_000;

export interface ServerHandle {
  framework: Framework;
  variant: Variant;
  /** 1 or 2: which of the endpoint's replica processes this is. */
  replica: number;
  port: number;
  /** The server's process.cpuUsage(), user + system, in µs. */
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
}

export async function startServer(
  framework: Framework,
  variant: Variant,
  replica: number,
  config: ServerConfig,
): Promise<ServerHandle> {
  const child: ChildProcess = fork(SERVER_FILE, [framework, variant], {
    cwd: BENCH_DIR,
    // KYB_BENCH_SERVER_NODE_ARGS adds Node flags to the servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    // No @kyb-webhooks/source condition: the servers import the packages' built dist, the code users install (tsx
    // compiles sources with keepNames, whose per-closure helper calls would be measured as ours). tsx still runs
    // the bench's own TypeScript.
    execArgv: ['--import', 'tsx', ...(process.env.KYB_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    env: { ...process.env, KYB_BENCH_SERVER: JSON.stringify(config), KYB_BENCH_NOW_MS: String(BENCH_NOW_MS) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no answer within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    function fail(reason: string) {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`${framework} ${variant} #${replica} server: ${reason}${stderr ? `\n${stderr.trim()}` : ''}`));
    }
    child.on('message', function onMessage(message: ServerMessage) {
      if (message.type === 'ready') {
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message.port);
      } else if (message.type === 'error') {
        fail(message.message);
      }
    });
    child.once('exit', (code) => fail(`exited with ${code}`));
  });
  child.removeAllListeners('exit');

  let nextId = 0;
  const pending = new Map<number, (micros: number) => void>();
  child.on('message', (message: ServerMessage) => {
    if (message.type !== 'cpu') return;
    pending.get(message.id)?.(message.user + message.system);
    pending.delete(message.id);
  });

  return {
    framework,
    variant,
    replica,
    port,
    cpuMicros() {
      const id = ++nextId;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.send({ type: 'cpu', id } satisfies ParentMessage);
      });
    },
    close() {
      if (child.exitCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.disconnect();
        setTimeout(() => child.kill(), 5_000).unref();
      });
    },
  };
}
