/**
 * The root README's "from a clone" commands, run through the runner as `npm run` would run them: the CLI from the
 * clone prints the development variables, the example app started with exactly those answers a CLI-sent, attested
 * release 200. Each command gets `--keys` (and the JWKS a free port) so the test touches nothing in the repository.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './readme-blocks.js';
import { freePort, portOpen } from './run-quickstart.js';

const RUNNER = join(REPO_ROOT, 'scripts', 'run.mjs');
const dir = mkdtempSync(join(tmpdir(), 'kyb-clone-commands-'));
const keysFile = join(dir, 'dev-keys.json');
let app: ChildProcess | undefined;

/** `node scripts/run.mjs <args>` (what `npm run -s <task> -- <args>` runs), its output and exit code. */
function runner(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

afterAll(async () => {
  // The runner starts the app as its child: stop the whole process group by its id.
  if (app?.pid !== undefined && app.exitCode === null) {
    const exited = new Promise((resolve) => app!.once('exit', resolve));
    process.kill(-app.pid, 'SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('README: from a clone of this repository', () => {
  it('npm run cli -- keys, npm run example with its variables, npm run cli -- send: the app answers 200', async () => {
    const keys = await runner(['cli', 'keys', '--export', '--keys', keysFile, '--jwks-port', String(await freePort())]);
    expect(keys.code, keys.stderr).toBe(0);
    const exported = Object.fromEntries(
      [...keys.stdout.matchAll(/^export (KYB_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    expect(Object.keys(exported).sort()).toEqual([
      'KYB_ATTESTATION_ISSUER',
      'KYB_AUDIENCE',
      'KYB_JWKS_URL',
      'KYB_SECRET_V1',
      'KYB_SECRET_V2',
    ]);
    // Only the variables and comments: `> .env.kyb` must be a file the shell can source.
    expect(
      keys.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('export ')),
    ).toEqual([]);

    const port = await freePort();
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KYB_')));
    app = spawn(process.execPath, [RUNNER, 'example'], {
      cwd: REPO_ROOT,
      env: { ...inherited, ...exported, PORT: String(port) },
      stdio: 'ignore',
      detached: true,
    });
    const deadline = Date.now() + 90_000;
    while (!(await portOpen(port))) {
      expect(app.exitCode, 'the example app exited before listening').toBeNull();
      expect(Date.now() < deadline, 'the example app did not listen within 90 s').toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const sent = await runner([
      'cli',
      'send',
      'data_request.released',
      '--to',
      `http://127.0.0.1:${port}/webhooks/kyb`,
      '--keys',
      keysFile,
      '--json',
    ]);
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout).deliveries).toEqual([
      expect.objectContaining({ event: 'kyb.data_request.released', attested: true, status: 200 }),
    ]);

    // SIGTERM to the runner alone (what `kill <pid>` of `npm run example` does) stops the app too and frees its port.
    const exited = new Promise<number | null>((resolve) => app!.once('exit', (code) => resolve(code)));
    process.kill(app.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(await portOpen(port)).toBe(false);
  }, 180_000);

  // Two example apps on one port: the second must say so and stop, not print an unhandled 'error' event's stack.
  it.each(['express', 'fastify', 'koa', 'hono', 'node-http'])(
    'npm run example -- %s on a port another server holds exits 1, naming the port and PORT, and never says it listens',
    async (framework) => {
      const holder = createServer();
      await new Promise<void>((resolve, reject) => holder.once('error', reject).listen(0, '127.0.0.1', resolve));
      const { port } = holder.address() as AddressInfo;
      try {
        const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KYB_')));
        const run = await runner(['example', framework], {
          ...inherited,
          PORT: String(port),
          KYB_SECRET_V1: 'whsec_clone_test',
        });
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toContain('EADDRINUSE');
        expect(run.stderr).toContain(
          `Port ${port} is taken by another server: stop it, or start this one on another port, e.g. PORT=3001.`,
        );
        expect(run.stderr).not.toMatch(/^\s+at /m);
        expect(run.stdout).not.toMatch(/listening/i);
      } finally {
        await new Promise<void>((resolve) => holder.close(() => resolve()));
      }
    },
    120_000,
  );

  it('npm run example with only some of the attestation variables exits 1, naming the ones missing', async () => {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KYB_')));
    const run = await runner(['example', 'fastify'], {
      ...inherited,
      PORT: String(await freePort()),
      KYB_SECRET_V1: 'whsec_clone_test',
      KYB_ATTESTATION_ISSUER: 'https://kyb.example.com',
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('Set KYB_AUDIENCE and KYB_JWKS_URL too, or none of the three attestation variables');
    expect(run.stderr).not.toMatch(/^\s+at /m);
  }, 120_000);

  it('npm run example with an app that does not exist exits 2, naming the ones that do', async () => {
    const run = await runner(['example', 'rails']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no example app "rails": use express, fastify, koa, hono, node-http or nextjs');
  });
});
