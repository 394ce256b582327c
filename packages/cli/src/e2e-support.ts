/*
 * What the CLI's end-to-end tests share (not shipped: package.json leaves this file out): running the CLI as a child
 * process, starting the example apps as real servers from the environment `keys` prints, and a receiver of our own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createReceiver, type ReceiverOptions, type Receiver } from '@kyb-webhooks/core';

const here = dirname(fileURLToPath(import.meta.url));
/** packages/cli */
export const CLI_PACKAGE = join(here, '..');
/** The repository root. */
export const REPO = join(here, '..', '..', '..');
const CLI_ENTRY = join(here, 'cli.ts');

/** How long {@link runCli} waits for the CLI to exit before it kills it and fails with what it printed. */
export const CLI_RUN_TIMEOUT_MS = 60_000;

/**
 * The test timeout of a file that spawns the CLI: above {@link CLI_RUN_TIMEOUT_MS}, so a CLI that hangs fails with
 * its own stdout and stderr rather than vitest's bare "timed out". Each run starts node and compiles the sources
 * through tsx, which a CI machine loaded by the other test files can slow to several seconds per run.
 *
 * @example
 * ```ts
 * vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS })
 * ```
 */
export const CLI_TEST_TIMEOUT_MS = 3 * CLI_RUN_TIMEOUT_MS;
// Resolved here, so the CLI can run from any directory (a user's project has its own cwd).
const TSX = pathToFileURL(createRequire(join(REPO, 'package.json')).resolve('tsx')).href;

/** What a CLI run printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kyb-webhooks <args>` from the TypeScript sources (no build needed), as a user's shell would: stdout, stderr
 * and the exit code. `nodeArgs` come before the entry (e.g. an extra `--import`).
 */
export function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; nodeArgs?: readonly string[]; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@kyb-webhooks/source', ...(options.nodeArgs ?? []), '--import', TSX, CLI_ENTRY, ...args],
      { cwd: options.cwd ?? CLI_PACKAGE, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `kyb-webhooks ${args.join(' ')} did not exit within ${options.timeoutMs ?? CLI_RUN_TIMEOUT_MS} ms; stdout: ${stdout}; stderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? CLI_RUN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `kyb-webhooks <args>` with stdout and stderr on a pseudo-terminal (util-linux `script`), so the progress line
 * is drawn as a user sees it; the output is both streams as the terminal got them. Undefined where `script` is missing.
 */
export function runCliOnTerminal(args: readonly string[], options: { cwd?: string } = {}): CliRun | undefined {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, '--conditions=@kyb-webhooks/source', '--import', TSX, CLI_ENTRY, ...args]
    .map(quote)
    .join(' ');
  const run = spawnSync('script', ['-qefc', command, '/dev/null'], {
    cwd: options.cwd ?? CLI_PACKAGE,
    encoding: 'utf8',
    timeout: CLI_RUN_TIMEOUT_MS,
  });
  if (run.error !== undefined) return undefined;
  return { code: run.status, stdout: run.stdout, stderr: '' };
}

/**
 * {@link runCliOnTerminal} without blocking this process (servers the test runs here keep answering), with `env`
 * added. Undefined where `script` is missing.
 *
 * @example
 * ```ts
 * const run = await runCliOnTerminalAsync(['recover', '--request', id, '--to', url], { env: merchant.env })
 * ```
 */
export function runCliOnTerminalAsync(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun | undefined> {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, '--conditions=@kyb-webhooks/source', '--import', TSX, CLI_ENTRY, ...args]
    .map(quote)
    .join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: CLI_PACKAGE,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kyb-webhooks ${args.join(' ')} on a terminal did not exit in time; output: ${stdout}`));
    }, CLI_RUN_TIMEOUT_MS);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.code === 'ENOENT') resolve(undefined);
      else reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: '' });
    });
  });
}

/** A free TCP port on 127.0.0.1 (released before it is returned, so it can be given to a server). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The parsed `keys --json` output. */
export interface KeysOutput {
  keysFile: string;
  created: boolean;
  kid: string;
  currentVersion: string;
  previousVersion: string;
  env: Record<string, string>;
}

/** Creates a keys file at `file` (JWKS on a free port, so parallel test files do not collide) and returns `keys --json`. */
export async function createKeys(file: string): Promise<KeysOutput> {
  const run = await runCli(['keys', '--keys', file, '--jwks-port', String(await freePort()), '--json']);
  if (run.code !== 0) throw new Error(`keys failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as KeysOutput;
}

/** The secrets in a keys file: what no command but `keys` may ever print. */
export function secretsIn(file: string): string[] {
  const keys = JSON.parse(readFileSync(file, 'utf8')) as { secrets: Record<string, string>; privateKeyPem: string };
  return [...Object.values(keys.secrets), ...keys.privateKeyPem.split('\n').filter((line) => line.length > 40)];
}

/** A server the test started and stops. */
export interface Running {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts an example app (`examples/<framework>/src/server.ts`, what `pnpm start` runs) as a child process on a free
 * port with `env` (the output of `keys`), and waits until it accepts connections. Stopped by its PID.
 */
export async function startExample(
  framework: 'express' | 'fastify' | 'koa' | 'hono',
  env: Record<string, string>,
): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/server.ts'], {
    cwd: join(REPO, 'examples', framework),
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitForPort(port, child, () => output);
  return { url: `http://127.0.0.1:${port}/webhooks/kyb`, stop: () => stopChild(child) };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the example app exited with ${child.exitCode}: ${output()}`);
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopChild(child);
  throw new Error(`the example app did not listen on 127.0.0.1:${port} within 60 s: ${output()}`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(child.pid as number, 'SIGTERM');
  });
}

/**
 * A receiver of our own on 127.0.0.1 (core receiver behind node:http), for what the example apps cannot be
 * configured to do from the environment: a rotation overlap that ended, ordering enforce. `handle` may replace the
 * receiver entirely (a receiver that is wrong on purpose).
 */
export async function startReceiver(
  options: ReceiverOptions | ((body: Buffer) => { status: number; body: unknown }),
  setup?: (receiver: Receiver) => void,
): Promise<Running> {
  const receiver = typeof options === 'function' ? undefined : createReceiver(options);
  if (receiver && setup) setup(receiver);
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const answer = receiver
        ? receiver
            .receive({ method: request.method ?? 'POST', headers: request.headers as Record<string, string>, body })
            .then((result) => ({ status: result.status, body: result.body as unknown }))
        : Promise.resolve((options as (body: Buffer) => { status: number; body: unknown })(body));
      void answer.then(({ status, body: payload }) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(payload));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/kyb`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The merchant's side of a test against the local KYB service: a real receiver on 127.0.0.1 (the service's
 * secret and attestation settings, handlers that record every event), registered as the service's endpoint.
 * `outage.down` makes it answer 503 to everything; an event_id in `failing` makes its handler throw.
 *
 * @example
 * ```ts
 * merchant.outage.down = true // the service's deliveries fail until it is false again
 * ```
 */
export interface Merchant extends Running {
  /** Every event a handler ran, in order. */
  handled: { streamId: string; seq: number; eventId: string }[];
  outage: { down: boolean };
  failing: Set<string>;
  /** The environment a user would run the CLI with: KYB_API_KEY, KYB_BASE_URL, KYB_SECRET_V1, attestation settings. */
  env: Record<string, string>;
}

/**
 * Starts a {@link Merchant} for `service` (see there).
 *
 * @example
 * ```ts
 * const merchant = await startMerchant(await startKybService())
 * await runCli(['deliveries', requestId], { env: merchant.env })
 * ```
 */
export async function startMerchant(service: {
  baseUrl: string;
  apiKey: string;
  issuer: string;
  audience: string;
  jwksUrl: string;
  setEndpoint(endpoint: { url: string; secrets: Record<string, string> }): void;
}): Promise<Merchant> {
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  const handled: Merchant['handled'] = [];
  const outage = { down: false };
  const failing = new Set<string>();
  const receiver = createReceiver({
    secrets: { '1': secret },
    attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
  });
  receiver.onAny((event) => {
    if (failing.has(event.event_id)) throw new Error('the CRM is down');
    handled.push({ streamId: event.stream_id, seq: event.seq, eventId: event.event_id });
  });
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (outage.down) return void response.writeHead(503).end();
      void receiver
        .receive({
          method: request.method ?? 'POST',
          headers: request.headers as Record<string, string>,
          body: new Uint8Array(Buffer.concat(chunks)),
        })
        .then((result) => {
          response
            .writeHead(result.status, { 'content-type': 'application/json', ...result.headers })
            .end(JSON.stringify(result.body));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;
  service.setEndpoint({ url, secrets: { '1': secret } });
  return {
    url,
    handled,
    outage,
    failing,
    env: {
      KYB_API_KEY: service.apiKey,
      KYB_BASE_URL: service.baseUrl,
      KYB_SECRET_V1: secret,
      KYB_ATTESTATION_ISSUER: service.issuer,
      KYB_AUDIENCE: service.audience,
      KYB_JWKS_URL: service.jwksUrl,
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
