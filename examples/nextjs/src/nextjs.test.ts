import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleWebhook } from './lib/receiver.js';

// The example as its users run it: `next build` with no secret in the environment (as in CI or a Docker build),
// then `next start` on 127.0.0.1 with the variables `kyb-webhooks keys` prints, and every scenario of the CLI played
// against it. The build is the slow part (tens of seconds), so there is one, shared by every test here; a failure to
// build or start fails the file, in CI as anywhere (nothing here is skipped).
const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = join(APP, '..', '..');
const NEXT = join(APP, 'node_modules', 'next', 'dist', 'bin', 'next');
const CLI = join(REPO, 'packages', 'cli', 'src', 'cli.ts');
const TSX = pathToFileURL(createRequire(join(REPO, 'package.json')).resolve('tsx')).href;
const BUILD_TIMEOUT_MS = 300_000;
const CLI_TIMEOUT_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), 'kyb-nextjs-'));
const keysFile = join(dir, 'dev-keys.json');
// next build writes next-env.d.ts (gitignored here); removed again if it was not there, so the tree stays as it was.
const nextEnvExisted = existsSync(join(APP, 'next-env.d.ts'));
let server: ChildProcess | undefined;
let serverOutput = '';
let url = '';
let scenarioNames: string[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after `timeoutMs`): its exit code and output. */
function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not finish within ${options.timeoutMs} ms: ${stdout}${stderr}`));
    }, options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `kyb-webhooks <args>` from this clone's sources, as `npm run cli` runs it. */
function cli(...args: string[]): Promise<Run> {
  return run(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', TSX, CLI, ...args], {
    cwd: dir,
    env: process.env,
    timeoutMs: CLI_TIMEOUT_MS,
  });
}

/**
 * The environment without any KYB_ variable (what a CI or Docker build has), as `next build` and `next start` are run:
 * NODE_ENV production (vitest sets it to test, which Next would build into the app), no telemetry.
 */
function withoutKybVariables(): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KYB_'))),
    NODE_ENV: 'production',
    NEXT_TELEMETRY_DISABLED: '1',
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Waits until the server answers HTTP (a GET of the webhook route: 405, it exports POST only). */
async function waitUntilServing(origin: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited with ${child.exitCode}: ${serverOutput}`);
    try {
      await fetch(`${origin}/api/kyb/webhooks`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`next start did not answer on ${origin} within 60 s: ${serverOutput}`);
}

beforeAll(async () => {
  // Next bundles the core as users install it, from its built dist/ (`npm test` builds the packages first); a fresh
  // clone running this file alone has none yet.
  if (!existsSync(join(REPO, 'packages', 'core', 'dist', 'index.js'))) {
    const tsup = await run(process.execPath, [join(REPO, 'node_modules', 'tsup', 'dist', 'cli-default.js')], {
      cwd: join(REPO, 'packages', 'core'),
      env: process.env,
      timeoutMs: BUILD_TIMEOUT_MS,
    });
    if (tsup.code !== 0) throw new Error(`building @kyb-webhooks/core failed: ${tsup.stdout}${tsup.stderr}`);
  }
  const build = await run(process.execPath, [NEXT, 'build'], {
    cwd: APP,
    env: withoutKybVariables(),
    timeoutMs: BUILD_TIMEOUT_MS,
  });
  if (build.code !== 0) throw new Error(`next build failed (exit ${build.code}):\n${build.stdout}\n${build.stderr}`);

  const keys = await cli('keys', '--keys', keysFile, '--jwks-port', String(await freePort()), '--json');
  if (keys.code !== 0) throw new Error(`kyb-webhooks keys failed: ${keys.stderr}`);
  const { env } = JSON.parse(keys.stdout) as { env: Record<string, string> };
  const help = await cli('scenario', '--help');
  scenarioNames = [...help.stdout.split('\nScenarios:\n')[1]!.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);

  const port = await freePort();
  // In a process group of its own, stopped as a whole by its id in afterAll.
  server = spawn(process.execPath, [NEXT, 'start', '--hostname', '127.0.0.1', '--port', String(port)], {
    cwd: APP,
    env: { ...withoutKybVariables(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (serverOutput += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (serverOutput += chunk));
  await waitUntilServing(`http://127.0.0.1:${port}`, server);
  url = `http://127.0.0.1:${port}/api/kyb/webhooks`;
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  }
  if (!nextEnvExisted) rmSync(join(APP, 'next-env.d.ts'), { force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('the Next.js example, built without secrets and started with them', () => {
  it('knows the CLI’s scenarios', () => {
    expect(scenarioNames).toEqual(expect.arrayContaining(['duplicate', 'forged-hmac', 'secret-rotation']));
  });

  it(
    'passes every scenario of the CLI: each answer is what a correct receiver gives, exit 0',
    { timeout: 600_000 },
    async () => {
      const failed: string[] = [];
      for (const name of scenarioNames) {
        const played = await cli('scenario', name, '--to', url, '--keys', keysFile);
        if (played.code !== 0 || !played.stdout.includes('\u2713 every answer is what a correct receiver gives'))
          failed.push(`${name} (exit ${played.code}):\n${played.stdout}${played.stderr}`);
      }
      expect(failed).toEqual([]);
      // The handlers ran in the Next.js server, and its log says what the receiver answered.
      expect(serverOutput).toMatch(/^released \S+: 6 answers from 3 subjects$/m);
      expect(serverOutput).toMatch(/^kyb webhook 401 signature_mismatch$/m);
    },
  );
});

describe('the route handler without its environment', () => {
  it('answers 500 receiver_not_configured, naming the variable to set, and makes no receiver', async () => {
    const request = new Request('http://127.0.0.1/api/kyb/webhooks', { method: 'POST', body: '{}' });
    const answer = await handleWebhook(request, {});
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({
      error: { code: 'receiver_not_configured', message: expect.stringContaining('Set KYB_SECRET_V1') },
    });
  });

  it('names the missing attestation variables when only some are set', async () => {
    const request = new Request('http://127.0.0.1/api/kyb/webhooks', { method: 'POST', body: '{}' });
    const answer = await handleWebhook(request, { KYB_SECRET_V1: 'whsec_x', KYB_AUDIENCE: 'merchant' });
    expect(await answer.json()).toMatchObject({
      error: { message: expect.stringContaining('set KYB_ATTESTATION_ISSUER and KYB_JWKS_URL too') },
    });
  });
});
