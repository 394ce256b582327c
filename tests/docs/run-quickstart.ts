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
 * The variables a quick start reads, as the test signer and its JWKS server define them. Both naming schemes of the
 * repository are set: the READMEs' (`KYB_WEBHOOK_SECRET`, `KYB_WEBHOOK_SECRET_VERSION`, `KYB_BASE_URL`) and the
 * examples' (`KYB_SECRET_V<n>`, `KYB_JWKS_URL`).
 */
export function quickstartEnv(signer: TestSigner, jwksOrigin: string, port: number): Record<string, string> {
  const version = signer.currentVersion;
  const secret = signer.secrets[version] as string;
  return {
    KYB_WEBHOOK_SECRET: secret,
    KYB_WEBHOOK_SECRET_VERSION: version,
    [`KYB_SECRET_V${version}`]: secret,
    KYB_ATTESTATION_ISSUER: signer.issuer,
    KYB_AUDIENCE: signer.audience,
    KYB_BASE_URL: jwksOrigin,
    KYB_JWKS_URL: `${jwksOrigin}/.well-known/kyb-jwks.json`,
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
}

/** A free TCP port on 127.0.0.1 (released again at once; the quick start binds it moments later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function portOpen(port: number): Promise<boolean> {
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
  const timer = setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `file` (a written quick start) with the signer's environment, waits until it listens, POSTs one signed
 * `kyb.data_request.released` delivery to `path`, waits briefly for its handler's output, and stops it.
 */
export async function runQuickstart(
  file: string,
  options: { signer: TestSigner; jwksOrigin: string; path: string; startTimeoutMs?: number },
): Promise<QuickstartRun> {
  const port = await freePort();
  const envelope = testEvents.dataRequestReleased();
  const requestId = envelope.data.request_id as string;
  const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', file], {
    cwd: dirname(file),
    env: { ...process.env, ...quickstartEnv(options.signer, options.jwksOrigin, port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const result = (partial: Omit<QuickstartRun, 'requestId' | 'stdout' | 'stderr'>): QuickstartRun => ({ ...partial, requestId, stdout, stderr });
  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    while (!(await portOpen(port))) {
      if (child.exitCode !== null || child.signalCode !== null) {
        return result({ status: null, responseBody: '', failure: `it exited (${child.exitCode ?? child.signalCode}) before listening on PORT` });
      }
      if (Date.now() > deadline) return result({ status: null, responseBody: '', failure: `it did not listen on PORT=${port} within the deadline` });
      await sleep(100);
    }
    const { headers, body } = await options.signer.sign(envelope);
    const response = await fetch(`http://127.0.0.1:${port}${options.path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(15_000) });
    const responseBody = await response.text();
    // The handler ran before the answer was written; its output may still be in the pipe.
    const outputDeadline = Date.now() + 5_000;
    while (!stdout.includes(requestId) && Date.now() < outputDeadline) await sleep(50);
    return result({ status: response.status, responseBody });
  } finally {
    await stop(child);
  }
}
