import { spawn, type ChildProcess } from 'node:child_process';

/** A server process started by the test run, with what it takes to stop it. */
export interface RunningProcess {
  readonly pid: number;
  /** The signal that stops this server fastest; its data is thrown away, so no clean shutdown is needed. */
  readonly stopSignal: NodeJS.Signals;
  /** Stop the process by its PID and wait until it exited (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  command: string;
  args: string[];
  /** Run as this user (postgres refuses to run as root). */
  uid?: number;
  gid?: number;
  env?: NodeJS.ProcessEnv;
  /** The server is ready once a line of its output matches this. */
  ready: RegExp;
  stopSignal: NodeJS.Signals;
  timeoutMs?: number;
  /** Used in error messages only. */
  label: string;
}

const TAIL_LINES = 30;

/**
 * Spawn a server and resolve once its output says it accepts connections. On failure the error carries the last lines
 * of its output (servers print why they failed there, e.g. a port in use) and the process is already stopped.
 */
export function startProcess(options: StartOptions): Promise<RunningProcess> {
  const child = spawn(options.command, options.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });
  const tail: string[] = [];
  const running = handle(child, options.stopSignal);

  return new Promise<RunningProcess>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void running?.stop(500);
      reject(new Error(`${options.label}: ${reason}\n  ${tail.join('\n  ')}`));
    };
    const timer = setTimeout(
      () => fail(`not ready after ${options.timeoutMs ?? 30_000} ms`),
      options.timeoutMs ?? 30_000,
    );

    // Both streams are read for the whole life of the process: a full pipe would block the server.
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        tail.push(line.trimEnd());
        if (tail.length > TAIL_LINES) tail.shift();
        if (!settled && options.ready.test(line)) {
          settled = true;
          clearTimeout(timer);
          resolve(running!);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (error) => fail(`could not start ${options.command}: ${error.message}`));
    child.once('exit', (code, signal) => fail(`exited before it was ready (code ${code}, signal ${signal})`));
  });
}

function handle(child: ChildProcess, stopSignal: NodeJS.Signals): RunningProcess | undefined {
  if (child.pid === undefined) return undefined;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    pid,
    stopSignal,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal(pid, stopSignal);
      const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Send a signal by PID, ignoring a process that is already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  // 0 and negative PIDs address process groups (-1: every process we may signal): never send those.
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Run a command to completion; rejects with its output tail when it fails. */
export function run(
  command: string,
  args: string[],
  options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; label: string; timeoutMs?: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-8_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      if (child.pid !== undefined) signal(child.pid, 'SIGKILL');
    }, options.timeoutMs ?? 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${options.label}: could not run ${command}: ${error.message}`));
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(new Error(`${options.label}: ${command} failed (code ${code}, signal ${sig})\n${output.slice(-2_000)}`));
    });
  });
}
