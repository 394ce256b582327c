/**
 * Runs a README quick start as a user would: as its own Node process (through tsx, from the packages' sources),
 * configured only by environment variables, then sends it one signed, attested delivery over HTTP on 127.0.0.1 and
 * stops it by PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { TestSigner } from '@kyb-webhooks/testing';
import { testEvents } from '@kyb-webhooks/testing';

/**
 * The variables a quick start reads, as the test signer and its JWKS server define them: the names the example apps
 * read and `kyb-webhooks keys` prints (`KYB_SECRET_V<kv>` for every secret version, `KYB_ATTESTATION_ISSUER`,
 * `KYB_AUDIENCE`, `KYB_JWKS_URL`), plus `PORT` and `HOST`.
 */
export function quickstartEnv(signer: TestSigner, jwksUrl: string, port: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [version, secret] of Object.entries(signer.secrets)) env[`KYB_SECRET_V${version}`] = secret;
  return {
    ...env,
    KYB_ATTESTATION_ISSUER: signer.issuer,
    KYB_AUDIENCE: signer.audience,
    KYB_JWKS_URL: jwksUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
}

/** What one run saw. */
export interface QuickstartRun {
  /** HTTP status of the delivery, or null when the server never listened. */
  status: number | null;
  responseBody: string;
  /** The data request id of the delivered release: what the quick start's handler prints. */
  requestId: string;
  stdout: string;
  stderr: string;
  /** Why the run could not deliver (exit before listening, no port within the deadline). */
  failure?: string;
  /** The exit code, when it exited before listening. */
  exitCode?: number | null;
}

/**
 * Starts a written quick start as its own process with `env` and nothing KYB_ from the test's own environment, so
 * nothing can stand in for what the quick start is given. `closed` settles once it exited AND its pipes drained.
 */
function startQuickstart(
  file: string,
  env: Record<string, string>,
): { child: ChildProcess; closed: Promise<void>; output(): { stdout: string; stderr: string } } {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KYB_')));
  const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', file], {
    cwd: dirname(file),
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { child, closed, output: () => ({ stdout, stderr }) };
}

/** What a quick start did when its port was taken. */
export interface TakenPortRun {
  /** The exit code, or null when it was still running at the deadline (and was stopped). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts `file` with PORT set to a port another server on 127.0.0.1 already holds, and waits for it to exit (up to
 * `timeoutMs`, then stops it): a quick start must fail there, not print that it listens while nothing of it does.
 */
export async function runQuickstartOnTakenPort(
  file: string,
  options: { signer: TestSigner; jwksUrl: string; timeoutMs?: number },
): Promise<TakenPortRun> {
  const holder = createServer();
  await new Promise<void>((resolve, reject) => holder.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as AddressInfo;
  const { child, closed, output } = startQuickstart(file, quickstartEnv(options.signer, options.jwksUrl, port));
  try {
    const exited = await Promise.race([closed.then(() => true), sleep(options.timeoutMs ?? 90_000).then(() => false)]);
    return { exitCode: exited ? child.exitCode : null, ...output() };
  } finally {
    await stop(child);
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
}

/** A free TCP port on 127.0.0.1 (released again at once; the quick start binds it moments later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(
    () => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'),
    5_000,
  );
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `file` (a written quick start) with the signer's environment, waits until it listens, POSTs one signed
 * `kyb.data_request.released` delivery to `path`, waits briefly for its handler's output, and stops it.
 */
export async function runQuickstart(
  file: string,
  options: {
    signer: TestSigner;
    jwksUrl: string;
    path: string;
    startTimeoutMs?: number;
    /** Variables to leave out of the quick start's environment, e.g. to see how it reports a missing one. */
    unset?: readonly string[];
  },
): Promise<QuickstartRun> {
  const port = await freePort();
  const envelope = testEvents.dataRequestReleased();
  const requestId = envelope.data.request_id as string;
  const env = quickstartEnv(options.signer, options.jwksUrl, port);
  for (const name of options.unset ?? []) delete env[name];
  const { child, closed, output } = startQuickstart(file, env);
  const result = (partial: Omit<QuickstartRun, 'requestId' | 'stdout' | 'stderr'>): QuickstartRun => ({
    ...partial,
    requestId,
    ...output(),
  });
  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
    while (!(await portOpen(port))) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await closed;
        return result({
          status: null,
          responseBody: '',
          exitCode: child.exitCode,
          failure: `it exited (${child.exitCode ?? child.signalCode}) before listening on PORT`,
        });
      }
      if (Date.now() > deadline)
        return result({
          status: null,
          responseBody: '',
          failure: `it did not listen on PORT=${port} within the deadline`,
        });
      await sleep(100);
    }
    const { headers, body } = await options.signer.sign(envelope);
    const response = await fetch(`http://127.0.0.1:${port}${options.path}`, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const responseBody = await response.text();
    // The handler ran before the answer was written; its output may still be in the pipe.
    const outputDeadline = Date.now() + 5_000;
    while (!output().stdout.includes(requestId) && Date.now() < outputDeadline) await sleep(50);
    return result({ status: response.status, responseBody });
  } finally {
    await stop(child);
  }
}
