import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PACKAGE, createKeys, freePort, runCli, secretsIn, startExample, type KeysOutput, type Running } from './e2e-support.js';

// `send` end to end: the CLI as a child process against the Express example app, started from the environment
// `kyb-webhooks keys` printed, as a user would after pasting it.
const dir = mkdtempSync(join(tmpdir(), 'kyb-cli-send-'));
const keysFile = join(dir, 'dev-keys.json');
let keys: KeysOutput;
let app: Running;

beforeAll(async () => {
  keys = await createKeys(keysFile);
  app = await startExample('express', keys.env);
});

afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface SendJson {
  ok: boolean;
  jwks: { url: string; started: boolean } | null;
  deliveries: { delivery: string; event: string; event_id: string; stream_id: string; seq: number; attempt: number; attested: boolean; status: number | null; code: string | null; error: string | null }[];
}

async function send(...args: string[]) {
  const run = await runCli(['send', ...args, '--keys', keysFile]);
  for (const secret of secretsIn(keysFile)) expect(run.stdout + run.stderr).not.toContain(secret);
  return run;
}

async function sendJson(...args: string[]) {
  const run = await send(...args, '--to', app.url, '--json');
  return { run, result: JSON.parse(run.stdout) as SendJson };
}

function savedCaptures(saveDir: string): { headers: Record<string, string>; body: string }[] {
  return readdirSync(saveDir)
    .sort()
    .map((name) => JSON.parse(readFileSync(join(saveDir, name), 'utf8')) as { headers: Record<string, string>; body: string });
}

describe('send against the Express example', () => {
  it.each([
    ['data_request.pending_approval', false],
    ['data_request.released', true],
    ['data_request.refused', false],
    ['signature_request.pending_approval', false],
    ['signature_request.signed', false],
    ['signature_request.refused', false],
    ['kyb.business.wallet_address_changed', true],
  ] as const)('%s is accepted (200), attested: %s, exit 0', async (type, attested) => {
    const { run, result } = await sendJson(type);
    expect(result.deliveries).toEqual([expect.objectContaining({ event: type.startsWith('kyb.') ? type : `kyb.${type}`, attested, status: 200, code: null, attempt: 1 })]);
    expect(result.ok).toBe(true);
    expect(run.code).toBe(0);
  });

  it('--duplicate sends the same event_id twice: 200, then 200 duplicate, in a table', async () => {
    const run = await send('data_request.released', '--to', app.url, '--duplicate');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^delivery\s+event\s+event_id\s+stream\/seq\s+attempt\s+attested\s+status\s+code\s+expected\s+result$/);
    expect(lines[2]).toMatch(/^delivery\s+data_request\.released\s+\S{26}\s+\S+\s+1\s+yes\s+200\s+—\s+2xx\s+ok$/);
    expect(lines[3]).toMatch(/^same event_id again\s+data_request\.released\s+\S{26}\s+\S+\s+2\s+yes\s+200\s+duplicate\s+200 duplicate\s+ok$/);
    expect(lines[2]!.split(/\s+/)[2]).toBe(lines[3]!.split(/\s+/)[4]);
    expect(run.code).toBe(0);
  });

  it('typed flags and --data end up in the delivery that was sent (--save)', async () => {
    const saveDir = join(dir, 'typed');
    const { run } = await sendJson(
      'data_request.refused', '--stream', 'dr_cli_typed', '--seq', '4', '--event-id', '01JH4Z6V4M5Q8R2T7W9XKCNBDF', '--attempt', '3',
      '--reason', 'business_wallet_rotated', '--data', '{"note":"from the CLI"}', '--secret-version', '1', '--save', saveDir,
    );
    const [capture] = savedCaptures(saveDir);
    expect(JSON.parse(capture!.body)).toMatchObject({
      event: 'kyb.data_request.refused', event_id: '01JH4Z6V4M5Q8R2T7W9XKCNBDF', stream_id: 'dr_cli_typed', seq: 4,
      data: { request_id: 'dr_cli_typed', reason: 'business_wallet_rotated', note: 'from the CLI' },
    });
    expect(capture!.headers).toMatchObject({ 'service-delivery-attempt': '3', 'service-event-id': '01JH4Z6V4M5Q8R2T7W9XKCNBDF' });
    expect(capture!.headers['service-kyb-signature']).toMatch(/,kv=1$/);
    expect(run.code).toBe(0);
  });

  it('a null in --data removes the field; --previous-wallet-address sets it', async () => {
    const saveDir = join(dir, 'wallet');
    const { run } = await sendJson('business.wallet_address_changed', '--previous-wallet-address', '0x1111111111111111111111111111111111111111', '--data', '{"wallet_address":null}', '--save', saveDir);
    const data = (JSON.parse(savedCaptures(saveDir)[0]!.body) as { data: Record<string, unknown> }).data;
    expect(data.previous_wallet_address).toBe('0x1111111111111111111111111111111111111111');
    expect(data).not.toHaveProperty('wallet_address');
    expect(run.code).toBe(0);
  });

  it('--no-attestation on an attested type: 401 attestation_missing, the fix, exit 1', async () => {
    const run = await send('data_request.released', '--to', app.url, '--no-attestation');
    expect(run.stdout).toMatch(/401\s+attestation_missing\s+2xx\s+FAILED/);
    expect(run.stdout).toContain('\u2717 401 attestation_missing: This event type must carry an attestation JWT');
    expect(run.code).toBe(1);
  });

  it('a secret version the app does not have: 401 signature_unknown_version, exit 1', async () => {
    const { run, result } = await sendJson('data_request.refused', '--secret-version', '9');
    expect(result.deliveries[0]).toMatchObject({ status: 401, code: 'signature_unknown_version' });
    expect(run.code).toBe(1);
  });

  it('the advice names the secret variable of the version it signed with', async () => {
    const run = await send('data_request.refused', '--to', app.url, '--secret-version', '9');
    expect(run.stdout).toContain('\u2717 401 signature_unknown_version: The kv version is not among the receiver\u2019s secrets: add that version (KYB_SECRET_V9)');
    expect(run.code).toBe(1);
  });

  it.each(['/webhooks/kyc', '/webhook'])('a path no webhook route serves (%s): says to check --to, exit 1', async (path) => {
    const run = await send('data_request.refused', '--to', new URL(path, app.url).href);
    expect(run.stdout).toContain(`\u2717 404: nothing answers POST at ${path}: check that --to names your webhook route exactly`);
    expect(run.code).toBe(1);
  });

  it('no app listening: says so and exits 1', async () => {
    const run = await send('data_request.refused', '--to', `http://127.0.0.1:${await freePort()}/webhooks/kyb`);
    expect(run.stdout).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+\/webhooks\/kyb \(network error \(ECONNREFUSED\)\): is your dev server running/);
    expect(run.code).toBe(1);
  });
});

describe('send usage errors exit 2 and say how to fix them', () => {
  it.each([
    [['signature_request.released', '--to', 'http://127.0.0.1:1/x'], "expected one of: data_request.pending_approval, data_request.released"],
    [['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--seq', '-1'], "option '--seq <n>' argument '-1' is invalid. expected an integer \u2265 0"],
    [['data_request.refused', '--to', 'ftp://127.0.0.1/x'], 'expected an http:// or https:// URL'],
    [['data_request.refused'], "required option '--to <url>' not specified"],
    [['data_request.released', '--to', 'http://127.0.0.1:1/x', '--reason', 'declined'], '--reason applies to data_request.refused, signature_request.refused, not to data_request.released; put other fields in --data.'],
    [['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--data', '[1]'], 'expected a JSON object'],
  ])('%j', async (args, message) => {
    const run = await send(...args);
    expect(run.stderr).toContain(message);
    expect(run.code).toBe(2);
  });
});

describe('the development JWKS while sending', () => {
  it('an attested send serves the JWKS itself at KYB_JWKS_URL while it runs', async () => {
    const { run, result } = await sendJson('data_request.released');
    expect(result.jwks).toEqual({ url: keys.env.KYB_JWKS_URL, started: true });
    expect(run.code).toBe(0);
  });

  it('uses a running `jwks serve` on that port instead of starting its own', async () => {
    const server = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/cli.ts', 'jwks', 'serve', '--keys', keysFile], {
      cwd: CLI_PACKAGE,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      let output = '';
      server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await expect.poll(() => output, { timeout: 30_000 }).toContain('Press Ctrl-C to stop.');
      const { run, result } = await sendJson('business.wallet_address_changed');
      expect(result.jwks).toEqual({ url: keys.env.KYB_JWKS_URL, started: false });
      expect(result.deliveries[0]).toMatchObject({ status: 200 });
      expect(run.code).toBe(0);
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      process.kill(server.pid!, 'SIGTERM');
      await exited;
    }
  });

  it('something else on the JWKS port: exit 1 and what to do, nothing sent', async () => {
    const port = Number(new URL(keys.env.KYB_JWKS_URL!).port);
    const squatter = createServer((_request, response) => response.writeHead(404).end());
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', () => resolve()));
    try {
      const run = await send('data_request.released', '--to', app.url);
      expect(run.stderr).toContain(`Port ${port} is in use by something that does not serve these development keys`);
      expect(run.stdout).toBe('');
      expect(run.code).toBe(1);
    } finally {
      squatter.closeAllConnections();
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
