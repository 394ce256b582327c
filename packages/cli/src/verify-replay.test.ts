import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CLI_TEST_TIMEOUT_MS,
  createKeys,
  freePort,
  runCli,
  secretsIn,
  startExample,
  type KeysOutput,
  type Running,
} from './e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// Captures come from the CLI itself (`send --save`, `scenario --save`); verify checks them with the core, replay
// posts them to the Koa example app.
const dir = mkdtempSync(join(tmpdir(), 'kyb-cli-verify-'));
const keysFile = join(dir, 'dev-keys.json');
let keys: KeysOutput;
let app: Running;
let released: string; // a capture of an attested release that the app accepted
let relabelled: string; // a capture of a relabelled attestation
let refused: string; // a capture of an unattested event the app accepted

interface Capture {
  headers: Record<string, string>;
  body: string;
}

beforeAll(async () => {
  keys = await createKeys(keysFile);
  app = await startExample('koa', keys.env);
  const sent = await runCli([
    'send',
    'data_request.released',
    '--to',
    app.url,
    '--keys',
    keysFile,
    '--save',
    join(dir, 'sent'),
  ]);
  expect(sent.code).toBe(0);
  released = join(dir, 'sent', readdirSync(join(dir, 'sent'))[0]!);
  const sentRefused = await runCli([
    'send',
    'data_request.refused',
    '--to',
    app.url,
    '--keys',
    keysFile,
    '--save',
    join(dir, 'refused'),
  ]);
  expect(sentRefused.code).toBe(0);
  refused = join(dir, 'refused', readdirSync(join(dir, 'refused'))[0]!);
  await runCli([
    'scenario',
    'relabelled-attestation',
    '--to',
    app.url,
    '--keys',
    keysFile,
    '--save',
    join(dir, 'scenario'),
  ]);
  relabelled = join(
    dir,
    'scenario',
    readdirSync(join(dir, 'scenario')).find((name) => name.includes('another_event_id'))!,
  );
});

afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function read(file: string): Capture {
  return JSON.parse(readFileSync(file, 'utf8')) as Capture;
}

function write(name: string, capture: Capture): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(capture));
  return file;
}

// The signature a capture would carry had it been sent `secondsAgo` ago.
function signedAgo(capture: Capture, secondsAgo: number): Capture {
  const t = Math.floor(Date.now() / 1000) - secondsAgo;
  const secret = keys.env.KYB_SECRET_V2!;
  const mac = createHmac('sha256', secret).update(`${t}.`).update(capture.body).digest('hex');
  return { ...capture, headers: { ...capture.headers, 'service-kyb-signature': `t=${t},v1=${mac},kv=2` } };
}

// The capture with its attestation issued `secondsAgo` earlier (same claims otherwise), signed by `key` (default the
// development key), and its HMAC made that long ago too: a delivery captured back then.
function attestedAgo(capture: Capture, secondsAgo: number, key?: KeyObject): Capture {
  const body = JSON.parse(capture.body) as { attestation: string };
  const [header, payload] = body.attestation.split('.') as [string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iat: number; exp: number };
  const older = Buffer.from(
    JSON.stringify({ ...claims, iat: claims.iat - secondsAgo, exp: claims.exp - secondsAgo }),
  ).toString('base64url');
  const privateKey = key ?? (JSON.parse(readFileSync(keysFile, 'utf8')) as { privateKeyPem: string }).privateKeyPem;
  const token = `${header}.${older}.${sign('sha256', Buffer.from(`${header}.${older}`), privateKey).toString('base64url')}`;
  return signedAgo({ ...capture, body: capture.body.replace(body.attestation, token) }, secondsAgo);
}

// A capture of an attested release that no receiver has seen: sent to a port where nothing listens.
async function unsentRelease(name: string): Promise<string> {
  const saveDir = join(dir, name);
  const run = await runCli([
    'send',
    'data_request.released',
    '--to',
    `http://127.0.0.1:${await freePort()}/webhooks/kyb`,
    '--keys',
    keysFile,
    '--save',
    saveDir,
  ]);
  expect(run.code).toBe(1);
  return join(saveDir, readdirSync(saveDir)[0]!);
}

async function cli(...args: string[]) {
  const run = await runCli([...args, '--keys', keysFile]);
  for (const secret of secretsIn(keysFile)) expect(run.stdout + run.stderr).not.toContain(secret);
  return run;
}

function checkRows(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((line) => /^(request|signature|body|envelope|attestation|event data)\s{2}/.test(line))
    .map((line) => line.split(/\s{2,}/));
}

describe('verify', () => {
  it('a capture the app accepted verifies: every check passed, exit 0', async () => {
    const run = await cli('verify', released);
    expect(checkRows(run.stdout)).toEqual([
      ['request', 'passed'],
      ['signature', 'passed'],
      ['body', 'passed'],
      ['envelope', 'passed'],
      ['attestation', 'passed'],
      ['event data', 'passed'],
    ]);
    expect(run.stdout).toContain('\u2713 verifies: the receiver would answer 200.');
    expect(run.code).toBe(0);
  });

  it('a body changed after signing: the signature check failed (signature_mismatch), the rest not reached, the fix; exit 1', async () => {
    const capture = read(released);
    const tampered = write('tampered.json', {
      ...capture,
      body: capture.body.replace('"field_count":4', '"field_count":5'),
    });
    const run = await cli('verify', tampered);
    expect(checkRows(run.stdout)).toEqual([
      ['request', 'passed'],
      ['signature', 'FAILED: signature_mismatch'],
      ['body', 'not reached'],
      ['envelope', 'not reached'],
      ['attestation', 'not reached'],
      ['event data', 'not reached'],
    ]);
    expect(run.stdout).toContain('\u2717 401 signature_mismatch: The signature does not match the request body.');
    expect(run.stdout).toContain('fix: The HMAC does not match these bytes with this secret version');
    // The capture says which version signed it, so the advice names that variable, not a template.
    const kv = /kv=([^,]+)/.exec(capture.headers['service-kyb-signature']!)![1];
    expect(run.stdout).toContain(`the same secret (KYB_SECRET_V${kv})`);
    expect(run.stdout).not.toContain('KYB_SECRET_V<kv>');
    expect(run.code).toBe(1);
  });

  it('a relabelled attestation: the attestation check failed (attestation_relabelled), exit 1', async () => {
    const run = await cli('verify', relabelled, '--json');
    const report = (JSON.parse(run.stdout) as { reports: Record<string, unknown>[] }).reports[0];
    expect(report).toMatchObject({
      ok: false,
      status: 401,
      code: 'attestation_relabelled',
      failedCheck: 'attestation',
    });
    expect(report!.fix).toContain('the token was issued for another event');
    expect(run.code).toBe(1);
  });

  it('a capture signed 10 minutes ago: signature_expired now (exit 1), verifies with --at-signature-time (exit 0)', async () => {
    const old = write('old.json', signedAgo(read(refused), 600));
    const now = await cli('verify', old, '--json');
    expect(JSON.parse(now.stdout)).toMatchObject({
      ok: false,
      reports: [{ code: 'signature_expired', failedCheck: 'signature' }],
    });
    expect(now.code).toBe(1);
    const atSigning = await cli('verify', old, '--at-signature-time', '--json');
    expect(JSON.parse(atSigning.stdout)).toMatchObject({ ok: true, reports: [{ status: 200, code: null }] });
    expect(atSigning.code).toBe(0);
  });

  it('--headers (curl -D lines) and --body (the exact bytes) instead of a capture file', async () => {
    const capture = read(released);
    const headersFile = join(dir, 'headers.txt');
    writeFileSync(
      headersFile,
      [
        'POST /webhooks/kyb HTTP/1.1',
        ...Object.entries(capture.headers).map(([name, value]) => `${name}: ${value}`),
        '',
      ].join('\r\n'),
    );
    const bodyFile = join(dir, 'body.json');
    writeFileSync(bodyFile, capture.body);
    const run = await cli('verify', '--headers', headersFile, '--body', bodyFile, '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      reports: [{ status: 200, checks: expect.arrayContaining([{ check: 'attestation', result: 'passed' }]) }],
    });
    expect(run.code).toBe(0);
  });

  it('--from-env checks with the secrets and attestation settings of the environment, and prints none of them', async () => {
    // An unattested capture: the environment's KYB_JWKS_URL is not served during this check.
    const good = await runCli(['verify', refused, '--from-env', '--json'], { env: keys.env });
    expect(JSON.parse(good.stdout)).toMatchObject({
      ok: true,
      checkedWith: expect.stringContaining('KYB_SECRET_V1, KYB_SECRET_V2, KYB_ATTESTATION_ISSUER'),
    });
    expect(good.code).toBe(0);
    const rotated = { ...keys.env, KYB_SECRET_V2: 'whsec_a_secret_the_sender_never_had' };
    const bad = await runCli(['verify', refused, '--from-env'], { env: rotated });
    expect(bad.stdout).toContain('\u2717 401 signature_mismatch');
    expect(bad.stdout + bad.stderr).not.toContain('whsec_a_secret_the_sender_never_had');
    expect(bad.code).toBe(1);
  });

  it('a capture whose attestation expired: says when, that such captures cannot be replayed, and how to re-issue it', async () => {
    const old = write('verify-expired.json', attestedAgo(read(await unsentRelease('verify-expired')), 1800));
    const run = await cli('verify', old);
    expect(run.stdout).toContain('\u2717 401 signature_expired');
    expect(run.stdout).toMatch(
      /note: the attestation expired at \d{4}-\d\d-\d\dT[\d:.]+Z; captures older than 10 minutes cannot be replayed unless it is re-issued: `replay --resign` re-attests it with the development key, which signed it/,
    );
    expect(run.code).toBe(1);
  });

  it('event type and id are shown only when they have their shape: the body is unauthenticated text', async () => {
    const capture = read(refused);
    const body = JSON.parse(capture.body) as Record<string, unknown>;
    const odd = write(
      'odd-ids.json',
      signedAgo(
        {
          ...capture,
          body: JSON.stringify({
            ...body,
            event: 'kyb.\u001b[2Jmerchant_secret',
            event_id: 'whsec_this_is_not_an_event_id_0123',
          }),
        },
        0,
      ),
    );
    const run = await cli('verify', odd);
    expect(run.stdout).toContain(`${odd}: (not an event type) (not an event id)`);
    expect(run.stdout).not.toContain('whsec_this_is_not_an_event_id');
    expect(run.stdout).not.toContain('\u001b');
    expect(run.code).toBe(1);
  });

  it.each([
    ['a value with a line break', { 'x-note': 'one\ntwo' }, 'the value of header "x-note" has a line break'],
    ['a name that is not a token', { 'bad header': 'x' }, 'a header name is not an HTTP token'],
  ])(
    'a capture header fetch would refuse (%s): exit 2 for verify and replay, nothing sent',
    async (_case, extra, message) => {
      const capture = read(refused);
      const bad = write('bad-header.json', { ...capture, headers: { ...capture.headers, ...extra } });
      const verified = await cli('verify', bad);
      expect(verified.stderr).toContain(`The capture file ${bad} cannot be used: ${message}`);
      expect(verified.code).toBe(2);
      const replayed = await cli('replay', bad, '--to', app.url);
      expect(replayed.stderr).toContain(message);
      expect(replayed.stdout).toBe('');
      expect(replayed.code).toBe(2);
    },
  );

  it('without a keys file: exit 2, says to run `kyb-webhooks keys`, and creates none', async () => {
    const empty = join(dir, 'no-keys');
    mkdirSync(empty);
    const run = await runCli(['verify', refused], { cwd: empty });
    expect(run.stderr).toContain(
      `no development keys at ${join(empty, '.kyb-webhooks', 'dev-keys.json')}: run \`kyb-webhooks keys\` first`,
    );
    expect(run.stdout).toBe('');
    expect(existsSync(join(empty, '.kyb-webhooks'))).toBe(false);
    expect(run.code).toBe(2);
  });

  it('nothing to verify is a usage error (exit 2)', async () => {
    const run = await cli('verify');
    expect(run.stderr).toContain('Nothing to verify: give capture files, or --headers <file> --body <file>.');
    expect(run.code).toBe(2);
  });
});

describe('replay', () => {
  it('posts a capture byte for byte: the app already processed it, so 200 duplicate; exit 0', async () => {
    const run = await cli('replay', released, '--to', app.url, '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      deliveries: [{ capture: released, status: 200, code: 'duplicate' }],
    });
    expect(run.code).toBe(0);
  });

  it('--save writes what it sent, as captures that verify', async () => {
    const saveDir = join(dir, 'replayed');
    const run = await cli('replay', released, '--to', app.url, '--save', saveDir);
    expect(run.code).toBe(0);
    const saved = readdirSync(saveDir);
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatch(/^replay-1-.+\.json$/);
    expect((await cli('verify', join(saveDir, saved[0]!))).code).toBe(0);
  });

  it('a capture older than 5 minutes: 401 signature_expired (exit 1), accepted with --resign', async () => {
    const capture = read(released);
    const event = JSON.parse(capture.body) as { event_id: string };
    const fresh = { ...capture, body: capture.body.replace(event.event_id, '01JH4Z6V4M5Q8R2T7W9XKCNBDF') };
    const old = write('stale.json', signedAgo(fresh, 600));
    const stale = await cli('replay', old, '--to', app.url);
    expect(stale.stdout).toMatch(
      /stale\.json\s+data_request\.released\s+01JH4Z6V4M5Q8R2T7W9XKCNBDF\s+401\s+signature_expired/,
    );
    expect(stale.code).toBe(1);
    // Only the HMAC is renewed: the attestation still names the original event_id, so the receiver sees a relabel.
    const resigned = await cli('replay', old, '--to', app.url, '--resign', '--json');
    expect(JSON.parse(resigned.stdout)).toMatchObject({
      ok: false,
      deliveries: [{ status: 401, code: 'attestation_relabelled' }],
    });
  });

  it('--resign --secret-version signs with another version; a kv the development keys lack is refused with the ones they have', async () => {
    const capture = read(refused);
    const event = JSON.parse(capture.body) as { event_id: string };
    const fresh = { ...capture, body: capture.body.replaceAll(event.event_id, '01JH4Z6V4M5Q8R2T7W9XKCNBDH') };
    const unknownVersion = write('kv7.json', {
      ...fresh,
      headers: { ...fresh.headers, 'service-kyb-signature': 't=1,v1=00,kv=7' },
    });
    const refusedRun = await cli('replay', unknownVersion, '--to', app.url, '--resign');
    expect(refusedRun.stderr).toContain(
      'is signed with kv=7, which the development keys do not have (they have 1, 2): add --secret-version <one of them>.',
    );
    expect(refusedRun.code).toBe(2);
    const run = await cli('replay', unknownVersion, '--to', app.url, '--resign', '--secret-version', '2', '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, deliveries: [{ status: 200, code: null }] });
    const without = await cli('replay', unknownVersion, '--to', app.url, '--secret-version', '2');
    expect(without.stderr).toContain('--secret-version re-signs the captures: give --resign with it');
    expect(without.code).toBe(2);
  });

  it('--resign re-attests an expired attestation the development key signed, and says so; exit 0', async () => {
    const old = write('replay-expired.json', attestedAgo(read(await unsentRelease('replay-expired')), 1800));
    const plain = await cli('replay', old, '--to', app.url);
    expect(plain.stdout).toContain(
      'cannot be replayed unless it is re-issued: `replay --resign` re-attests it with the development key',
    );
    expect(plain.code).toBe(1);
    const run = await cli('replay', old, '--to', app.url, '--resign');
    expect(run.stdout).toMatch(/replay-expired\.json\s+data_request\.released\s+[0-9A-Z]{26}\s+200\s+—/);
    expect(run.stdout).toMatch(
      /replay-expired\.json: note: re-attested with the development key: its attestation had expired at \S+ \(same claims, new iat and exp\)/,
    );
    expect(run.code).toBe(0);
  });

  it('--resign cannot renew an attestation another key signed: says so, exit 1', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const old = write(
      'replay-foreign.json',
      attestedAgo(read(await unsentRelease('replay-foreign')), 1800, privateKey),
    );
    const run = await cli('replay', old, '--to', app.url, '--resign');
    expect(run.stdout).toMatch(/401\s+attestation_invalid/);
    expect(run.stdout).toContain(
      'and only its signer can do that (the development key did not sign it): ask the service to redeliver the event',
    );
    expect(run.code).toBe(1);
  });

  it('--resign checks every capture before sending any: a kv the keys lack in the second one, exit 2, the first not sent', async () => {
    const capture = read(refused);
    const event = JSON.parse(capture.body) as { event_id: string };
    const fresh = { ...capture, body: capture.body.replaceAll(event.event_id, '01JH4Z6V4M5Q8R2T7W9XKCNBDJ') };
    const first = write('first-of-two.json', fresh);
    const second = write('second-kv7.json', {
      ...capture,
      headers: { ...capture.headers, 'service-kyb-signature': 't=1,v1=00,kv=7' },
    });
    const run = await cli('replay', first, second, '--to', app.url, '--resign');
    expect(run.stderr).toContain(`${second} is signed with kv=7, which the development keys do not have`);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
    // Had the first been sent, the app would now call it a duplicate.
    const again = await cli('replay', first, '--to', app.url, '--resign', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ deliveries: [{ status: 200, code: null }] });
  });

  it('--resign without a keys file: exit 2, nothing sent, no keys created', async () => {
    const empty = join(dir, 'no-keys-replay');
    mkdirSync(empty);
    const run = await runCli(['replay', refused, '--to', app.url, '--resign'], { cwd: empty });
    expect(run.stderr).toContain('no development keys at');
    expect(run.stdout).toBe('');
    expect(existsSync(join(empty, '.kyb-webhooks'))).toBe(false);
    expect(run.code).toBe(2);
  });

  it('a body with odd event fields: the table shows placeholders, not the text', async () => {
    const capture = read(refused);
    const odd = write('odd-replay.json', {
      ...capture,
      body: JSON.stringify({ event: 'kyb.\u001b[31mred', event_id: 'x'.repeat(300) }),
      headers: { ...capture.headers, 'service-event-id': 'not-a-ulid' },
    });
    const run = await cli('replay', odd, '--to', app.url);
    expect(run.stdout).toMatch(
      /odd-replay\.json\s+\(not an event type\)\s+\(not an event id\)\s+401\s+signature_mismatch/,
    );
    expect(run.stdout).not.toContain('xxxxxxxx');
    expect(run.code).toBe(1);
  });

  it('--resign makes an old unattested capture acceptable again', async () => {
    const capture = read(refused);
    const event = JSON.parse(capture.body) as { event_id: string };
    const old = write(
      'stale-refused.json',
      signedAgo({ ...capture, body: capture.body.replaceAll(event.event_id, '01JH4Z6V4M5Q8R2T7W9XKCNBDG') }, 600),
    );
    const run = await cli('replay', old, '--to', app.url, '--resign', '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, deliveries: [{ status: 200, code: null }] });
    expect(run.code).toBe(0);
  });
});
