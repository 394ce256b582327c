/**
 * The processes of the queue-mode fleet test: one HTTP receiver (receiver.ts) and the worker processes (worker.ts),
 * each a `node` child of the test, supervised as a process manager would: a process that dies (SIGKILLed by the test,
 * or by itself at a planned fault) is started again, the receiver on the same port, so the service's retries reach
 * it. Every process is stopped by its PID (SIGKILL) in stop(), which the test calls in afterAll.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type Role = 'receiver' | 'worker';

export interface FleetProcess {
  role: Role;
  pid: number;
  child: ChildProcess;
  /** Resolves with the receiver's port (the worker's pid) once it printed READY; rejects if it exits first. */
  ready: Promise<number>;
  exited: Promise<void>;
  /** The last lines of its stderr. */
  tail: string[];
}

const FILES: Record<Role, string> = {
  receiver: fileURLToPath(new URL('./receiver.ts', import.meta.url)),
  worker: fileURLToPath(new URL('./worker.ts', import.meta.url)),
};
const MAX_RESTARTS = 40;
const TAIL_LINES = 15;

export class Fleet {
  /** Every process started, in order, alive or not. */
  readonly started: FleetProcess[] = [];
  /** PIDs of the processes that died by SIGKILL (the test's, or their own). */
  readonly killed = new Set<number>();
  port = 0;
  private stopping = false;
  private restarts = 0;
  private readonly roleEnv: Record<Role, Record<string, string>> = { receiver: {}, worker: {} };

  constructor(
    private readonly env: Record<string, string>,
    private readonly workers: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks/kyb`;
  }

  /** Starts the receiver and the workers, and resolves once all of them are ready. */
  async start(): Promise<void> {
    this.port = await this.spawn('receiver').ready;
    await Promise.all(Array.from({ length: this.workers }, () => this.spawn('worker').ready));
  }

  /** Resolves once every live process is ready (a restarted one included). */
  async ready(): Promise<void> {
    await Promise.all(this.alive().map((entry) => entry.ready));
  }

  alive(role?: Role): FleetProcess[] {
    return this.started.filter(
      (entry) =>
        (role === undefined || entry.role === role) && entry.child.exitCode === null && entry.child.signalCode === null,
    );
  }

  /** SIGKILLs one process by PID and waits until it is gone (the supervision starts another). */
  async kill(pid: number): Promise<void> {
    const entry = this.started.find((candidate) => candidate.pid === pid);
    this.killed.add(pid);
    process.kill(pid, 'SIGKILL');
    await entry?.exited;
  }

  /**
   * Replaces every process of `role` by one started with `env` added to its environment (e.g. other keys): the old
   * ones are asked to stop (SIGTERM: a worker stops taking jobs and waits for its running ones), and each one's
   * replacement starts once it exited, the receiver's on the same port. Resolves once the replacements are ready.
   */
  async replace(role: Role, env: Record<string, string>): Promise<void> {
    this.roleEnv[role] = env;
    const old = this.alive(role);
    for (const entry of old) entry.child.kill('SIGTERM');
    await Promise.all(old.map((entry) => entry.exited));
    await this.ready();
  }

  /** SIGKILLs every process by PID, restarting none, and waits until they are gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    const alive = this.alive();
    for (const entry of alive) {
      try {
        process.kill(entry.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await Promise.all(alive.map((entry) => entry.exited));
  }

  /** What each process left on stderr, for the message of a scenario that timed out. */
  describe(): string {
    return this.started
      .map((entry) => {
        const state = entry.child.exitCode ?? entry.child.signalCode ?? 'alive';
        return `${entry.role} ${entry.pid} (${state}):\n    ${entry.tail.join('\n    ')}`;
      })
      .join('\n');
  }

  private spawn(role: Role): FleetProcess {
    const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', FILES[role]], {
      env: {
        ...process.env,
        ...this.env,
        ...this.roleEnv[role],
        ...(role === 'receiver' ? { KYB_PORT: String(this.port) } : {}),
      },
      // stdin stays open for the child's life: it exits when the pipe closes (this process died, see child.ts).
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line.slice(0, 300));
        if (tail.length > TAIL_LINES) tail.shift();
      }
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const match = /READY (\d+)/.exec(chunk.toString());
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`${role} exited before it was ready (${code ?? signal}): ${tail.join(' | ')}`)),
      );
    });
    ready.catch(() => {}); // a restarted process may die before anyone waits for it
    const entry: FleetProcess = { role, pid: child.pid!, child, ready, exited, tail };
    this.started.push(entry);
    child.once('exit', (_code, signal) => {
      if (signal === 'SIGKILL') this.killed.add(entry.pid);
      const wanted = role === 'worker' ? this.workers : 1;
      if (this.stopping || this.alive(role).length >= wanted) return;
      if (++this.restarts > MAX_RESTARTS) return; // something is wrong: the scenario times out and shows describe()
      this.spawn(role);
    });
    return entry;
  }
}
