import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { LOGIN_TEST_ADDRESS } from '@kyb-webhooks/login/testing';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Runs a command to its end (killed after `timeoutMs`), with what it printed. */
function run(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The README's command, as a user runs it (`npm run demo -- login` is `node scripts/run.mjs demo login`).
it('`npm run demo -- login` signs in to the Express example through the local login server and prints the user id', async () => {
  const { code, stdout, stderr } = await run([join('scripts', 'run.mjs'), 'demo', 'login'], ROOT, process.env, 110_000);
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
  expect(stdout).toMatch(/GET {2}\/account +200 +the account page with the user id/);
  expect(stdout.trimEnd().split('\n').at(-1)).toBe(`user id: ${LOGIN_TEST_ADDRESS}`);
}, 120_000);

it('`pnpm start` with the login half configured stops with a message naming each missing variable', async () => {
  const env = {
    PATH: process.env.PATH,
    PORT: '0',
    KYB_AUTH_URL: 'http://127.0.0.1:9',
    KYB_CLIENT_ID: 'merchant-backend',
  };
  const { code, stderr } = await run(
    ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/server.ts'],
    join(import.meta.dirname, '..'),
    env,
    30_000,
  );
  expect(code).toBe(1);
  for (const name of ['KYB_CLIENT_SECRET', 'KYB_REDIRECT_URI', 'KYB_LOGIN_AUDIENCE', 'LOGIN_COOKIE_SECRET'])
    expect(stderr).toContain(`${name} (`);
  expect(stderr).not.toContain('KYB_CLIENT_ID (');
  expect(stderr).not.toMatch(/^\s+at /m); // the message, not a stack trace
}, 40_000);
