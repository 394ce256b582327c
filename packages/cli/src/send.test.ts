import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CLI_TEST_TIMEOUT_MS,
  CLI_PACKAGE,
  createKeys,
  freePort,
  runCli,
  secretsIn,
  startExample,
  startReceiver,
  type KeysOutput,
  type Running,
} from './e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

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
  deliveries: {
    delivery: string;
    event: string;
    event_id: string;
    stream_id: string;
    seq: number;
    attempt: number;
    attested: boolean;
    status: number | null;
    code: string | null;
    error: string | null;
  }[];
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
    .map(
      (name) =>
        JSON.parse(readFileSync(join(saveDir, name), 'utf8')) as { headers: Record<string, string>; body: string },
    );
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
    expect(result.deliveries).toEqual([
      expect.objectContaining({
        event: type.startsWith('kyb.') ? type : `kyb.${type}`,
        attested,
        status: 200,
        code: null,
        attempt: 1,
      }),
    ]);
    expect(result.ok).toBe(true);
    expect(run.code).toBe(0);
  });

  it('--duplicate sends the same event_id twice: 200, then 200 duplicate, in a table', async () => {
    const run = await send('data_request.released', '--to', app.url, '--duplicate');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^delivery\s+event\s+event_id\s+stream\/seq\s+attempt\s+attested\s+status\s+code\s+expected\s+result$/,
    );
    expect(lines[2]).toMatch(/^delivery\s+data_request\.released\s+\S{26}\s+\S+\s+1\s+yes\s+200\s+—\s+2xx\s+ok$/);
    expect(lines[3]).toMatch(
      /^same event_id again\s+data_request\.released\s+\S{26}\s+\S+\s+2\s+yes\s+200\s+duplicate\s+200 duplicate\s+ok$/,
    );
    expect(lines[2]!.split(/\s+/)[2]).toBe(lines[3]!.split(/\s+/)[4]);
    expect(run.code).toBe(0);
  });

  it('typed flags and --data end up in the delivery that was sent (--save)', async () => {
    const saveDir = join(dir, 'typed');
    const { run } = await sendJson(
      'data_request.refused',
      '--stream',
      'dr_cli_typed',
      '--seq',
      '4',
      '--event-id',
      '01JH4Z6V4M5Q8R2T7W9XKCNBDF',
      '--attempt',
      '3',
      '--reason',
      'business_wallet_rotated',
      '--data',
      '{"note":"from the CLI"}',
      '--secret-version',
      '1',
      '--save',
      saveDir,
    );
    const [capture] = savedCaptures(saveDir);
    expect(JSON.parse(capture!.body)).toMatchObject({
      event: 'kyb.data_request.refused',
      event_id: '01JH4Z6V4M5Q8R2T7W9XKCNBDF',
      stream_id: 'dr_cli_typed',
      seq: 4,
      data: { request_id: 'dr_cli_typed', reason: 'business_wallet_rotated', note: 'from the CLI' },
    });
    expect(capture!.headers).toMatchObject({
      'service-delivery-attempt': '3',
      'service-event-id': '01JH4Z6V4M5Q8R2T7W9XKCNBDF',
    });
    expect(capture!.headers['service-kyb-signature']).toMatch(/,kv=1$/);
    expect(run.code).toBe(0);
  });

  it('a null in --data removes the field; --previous-wallet-address sets it', async () => {
    const saveDir = join(dir, 'wallet');
    const { run } = await sendJson(
      'business.wallet_address_changed',
      '--previous-wallet-address',
      '0x1111111111111111111111111111111111111111',
      '--data',
      '{"wallet_address":null}',
      '--save',
      saveDir,
    );
    const data = (JSON.parse(savedCaptures(saveDir)[0]!.body) as { data: Record<string, unknown> }).data;
    expect(data.previous_wallet_address).toBe('0x1111111111111111111111111111111111111111');
    expect(data).not.toHaveProperty('wallet_address');
    expect(run.code).toBe(0);
  });

  it('--no-attestation on an attested type: the app answers 401 attestation_missing, which is what a correct receiver does, exit 0', async () => {
    const run = await send('data_request.released', '--to', app.url, '--no-attestation');
    expect(run.stdout).toMatch(
      /^delivery\s+data_request\.released\s+\S{26}\s+\S+\s+1\s+no\s+401\s+attestation_missing\s+401 attestation_missing\s+ok$/m,
    );
    expect(run.code).toBe(0);
  });

  it('--no-attestation against a receiver that accepts an unattested release: FAILED, why, exit 1', async () => {
    const careless = await startReceiver(() => ({ status: 200, body: { received: true } }));
    try {
      const run = await send('data_request.released', '--to', careless.url, '--no-attestation');
      expect(run.stdout).toMatch(/200\s+—\s+401 attestation_missing\s+FAILED/);
      expect(run.stdout).toContain(
        '\u2717 200: a correct receiver answers 401 attestation_missing: data_request.released must carry an attestation',
      );
      expect(run.code).toBe(1);
    } finally {
      await careless.stop();
    }
  });

  it('a secret version the app does not have (the development keys have it): 401 signature_unknown_version naming its variable, exit 1', async () => {
    const onlyV2 = await startReceiver({ secrets: { '2': keys.env.KYB_SECRET_V2! } });
    try {
      const run = await send('data_request.refused', '--to', onlyV2.url, '--secret-version', '1');
      expect(run.stdout).toMatch(/401\s+signature_unknown_version\s+2xx\s+FAILED/);
      expect(run.stdout).toContain(
        '\u2717 401 signature_unknown_version: The kv version is not among the receiver\u2019s secrets: add that version (KYB_SECRET_V1)',
      );
      expect(run.code).toBe(1);
    } finally {
      await onlyV2.stop();
    }
  });

  it('a receiver without HMAC secrets (attestation only): 200 unauthenticated, said to be acknowledged but not processed', async () => {
    const jwtOnly = await startReceiver({
      attestation: {
        issuer: keys.env.KYB_ATTESTATION_ISSUER!,
        audience: keys.env.KYB_AUDIENCE!,
        jwksUrl: keys.env.KYB_JWKS_URL!,
      },
    });
    try {
      const run = await send('data_request.refused', '--to', jwtOnly.url, '--duplicate');
      expect(run.stdout).toMatch(/^delivery\s+.*200\s+unauthenticated\s+2xx\s+ok$/m);
      expect(run.stdout).toMatch(/^same event_id again\s+.*200\s+unauthenticated\s+200 unauthenticated\s+ok$/m);
      expect(run.stdout).toContain(
        'acknowledged but not processed: the receiver has no HMAC secrets and this type carries no attestation',
      );
      expect(run.code).toBe(0);
    } finally {
      await jwtOnly.stop();
    }
  });

  it('a query string in --to is not printed (it may hold a token)', async () => {
    const run = await send(
      'data_request.refused',
      '--to',
      `http://127.0.0.1:${await freePort()}/webhooks/kyb?token=s3cr3t-in-the-url`,
    );
    expect(run.stdout).toMatch(
      /no answer from http:\/\/127\.0\.0\.1:\d+\/webhooks\/kyb\?… \(network error \(ECONNREFUSED\)\)/,
    );
    expect(run.stdout + run.stderr).not.toContain('s3cr3t-in-the-url');
    expect(run.code).toBe(1);
    // A bare token (a name without a value) is hidden too.
    const bare = await send(
      'data_request.refused',
      '--json',
      '--to',
      `http://127.0.0.1:${await freePort()}/webhooks/kyb?s3cr3tBareToken`,
    );
    expect(bare.stdout + bare.stderr).not.toContain('s3cr3tBareToken');
  });

  it.each(['/webhooks/kyc', '/webhook'])(
    'a path no webhook route serves (%s): says to check --to, exit 1',
    async (path) => {
      const run = await send('data_request.refused', '--to', new URL(path, app.url).href);
      expect(run.stdout).toContain(
        `\u2717 404: nothing answers POST at ${path}: check that --to names your webhook route exactly`,
      );
      expect(run.code).toBe(1);
    },
  );

  it('no app listening: says so and exits 1', async () => {
    const run = await send('data_request.refused', '--to', `http://127.0.0.1:${await freePort()}/webhooks/kyb`);
    expect(run.stdout).toMatch(
      /no answer from http:\/\/127\.0\.0\.1:\d+\/webhooks\/kyb \(network error \(ECONNREFUSED\)\): is your dev server running/,
    );
    expect(run.code).toBe(1);
  });
});

describe('send usage errors exit 2 and say how to fix them', () => {
  it.each([
    [
      ['signature_request.released', '--to', 'http://127.0.0.1:1/x'],
      'expected one of: data_request.pending_approval, data_request.released',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--seq', '-1'],
      "option '--seq <n>' argument '-1' is invalid. expected an integer \u2265 0",
    ],
    [['data_request.refused', '--to', 'ftp://127.0.0.1/x'], 'expected an http:// or https:// URL'],
    [['data_request.refused'], "required option '--to <url>' not specified"],
    [
      ['data_request.released', '--to', 'http://127.0.0.1:1/x', '--reason', 'declined'],
      '--reason applies to data_request.refused, signature_request.refused, not to data_request.released; put other fields in --data.',
    ],
    [['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--data', '[1]'], 'expected a JSON object'],
    [
      ['data_request.released', '--to', 'http://127.0.0.1:1/x', '--data', '{"request_id":"dr_other"}'],
      '--data cannot set request_id: it is the stream of the request (and a claim of the attestation); use --request-id <id>.',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--data', '{"seq":3}'],
      '--data cannot set seq: it is a field of the envelope, not of data; use --seq <n>.',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--data', '{"event_id":"01JH4Z6V4M5Q8R2T7W9XKCNBDF"}'],
      '--data cannot set event_id: it is a field of the envelope, not of data; use --event-id <ulid>.',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--data', '{"stream_id":"dr_x"}'],
      '--data cannot set stream_id: it is a field of the envelope, not of data; use --stream <id>.',
    ],
    [
      ['business.wallet_address_changed', '--to', 'http://127.0.0.1:1/x', '--data', '{"exp":1}'],
      '--data cannot set exp: the attestation signs a claim of that name, so the delivery would contradict it.',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--timeout', '2147483648'],
      "option '--timeout <ms>' argument '2147483648' is invalid. expected an integer from 1 to 2147483647",
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--secret-version', '9'],
      '--secret-version 9: the development keys have no such secret version (they have 1, 2); give one of them.',
    ],
    [
      ['data_request.refused', '--to', 'http://127.0.0.1:1/x', '--secret-version', ''],
      '--secret-version : the development keys have no such secret version (they have 1, 2); give one of them.',
    ],
  ])('%j', async (args, message) => {
    const run = await send(...args);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
  });

  it.each([
    'http://merchant:hunter2-password@127.0.0.1:1/webhooks/kyb',
    'http:merchant:hunter2-password@127.0.0.1:1/webhooks/kyb',
    'http:\\\\merchant:hunter2-password@127.0.0.1:1/webhooks/kyb',
  ])('--to with a user name and password (%s): exit 2, the password is not echoed', async (to) => {
    const run = await send('data_request.refused', '--to', to);
    expect(run.stderr).toContain('--to must not contain a user name or password (user:password@)');
    expect(run.stdout + run.stderr).not.toContain('hunter2-password');
    expect(run.code).toBe(2);
  });

  it('--to that does not parse and holds "@": exit 2, not quoted back (it may be a password)', async () => {
    const run = await send('data_request.refused', '--to', 'http://merchant:s3c/ret-password@127.0.0.1:1/webhooks/kyb');
    expect(run.stderr).toContain('--to is not a valid URL (not shown');
    expect(run.stdout + run.stderr).not.toContain('ret-password');
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
    const server = spawn(
      process.execPath,
      ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/cli.ts', 'jwks', 'serve', '--keys', keysFile],
      {
        cwd: CLI_PACKAGE,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
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
