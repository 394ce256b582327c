import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, streamOrdering } from '@kyb-webhooks/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CLI_TEST_TIMEOUT_MS,
  createKeys,
  runCli,
  runCliOnTerminal,
  secretsIn,
  startExample,
  startReceiver,
  type KeysOutput,
  type Running,
} from './e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// Every scenario once, end to end: the CLI as a child process against the example apps started as `pnpm start`
// starts them, configured only with what `kyb-webhooks keys` printed.
const dir = mkdtempSync(join(tmpdir(), 'kyb-cli-scenario-'));
const keysFile = join(dir, 'dev-keys.json');
let keys: KeysOutput;
const apps: Partial<Record<'express' | 'fastify' | 'koa' | 'hono', Running>> = {};
const started: Running[] = [];

beforeAll(async () => {
  keys = await createKeys(keysFile);
  const [express, fastify, koa, hono] = await Promise.all(
    (['express', 'fastify', 'koa', 'hono'] as const).map((framework) => startExample(framework, keys.env)),
  );
  Object.assign(apps, { express, fastify, koa, hono });
});

afterAll(async () => {
  await Promise.all([...Object.values(apps), ...started].map((app) => app.stop()));
  rmSync(dir, { recursive: true, force: true });
});

interface ScenarioJson {
  scenario: string;
  ok: boolean;
  precondition?: string;
  inferredOrdering?: string[];
  steps: { step: string; status: number | null; code: string | null; expected: string[]; ok: boolean; why?: string }[];
}

async function scenario(name: string, url: string, ...extra: string[]) {
  const run = await runCli(['scenario', name, '--to', url, '--keys', keysFile, '--json', ...extra]);
  for (const secret of secretsIn(keysFile)) expect(run.stdout + run.stderr).not.toContain(secret);
  return { run, result: JSON.parse(run.stdout) as ScenarioJson };
}

const answers = (result: ScenarioJson) => result.steps.map((step) => [step.step, step.status, step.code]);

describe('scenario against the example apps', () => {
  it.each([
    [
      'duplicate',
      'express',
      [
        ['release (attempt 1)', 200, null],
        ['same event_id again (attempt 2)', 200, 'duplicate'],
      ],
    ],
    [
      'out-of-order',
      'fastify',
      [
        ['seq 1 before seq 0', 200, null],
        ['seq 0', 200, null],
        ['seq 1 again (attempt 2)', 200, 'duplicate'],
      ],
    ],
    [
      'gap',
      'koa',
      [
        ['seq 0', 200, null],
        ['seq 2 (seq 1 missing)', 200, null],
      ],
    ],
    [
      'forged-hmac',
      'hono',
      [
        ['HMAC with a guessed secret', 401, 'signature_mismatch'],
        ['body changed after signing', 401, 'signature_mismatch'],
        ['the genuine delivery', 200, null],
      ],
    ],
    [
      'expired-attestation',
      'express',
      [
        ['attestation expired 30 min ago', 401, 'attestation_invalid'],
        ['same event, fresh attestation', 200, null],
      ],
    ],
    [
      'relabelled-attestation',
      'fastify',
      [
        ['attestation under another event_id', 401, 'attestation_relabelled'],
        ['attestation under another seq', 401, 'attestation_relabelled'],
        ['the genuine release', 200, null],
      ],
    ],
    [
      'secret-rotation',
      'koa',
      [
        ['signed with the current secret (kv=2)', 200, null],
        ['signed with the previous secret (kv=1)', 200, null],
      ],
    ],
    [
      'unknown-attested-type',
      'hono',
      [
        ['unknown type, genuine attestation', 200, null],
        ['unknown type, attestation by another key', 401, 'attestation_invalid'],
      ],
    ],
  ] as const)(
    '%s against the %s example: every answer is a correct receiver\u2019s, exit 0',
    async (name, framework, expected) => {
      const { run, result } = await scenario(name, apps[framework]!.url);
      expect(answers(result)).toEqual(expected);
      expect(result).toMatchObject({ scenario: name, ok: true });
      expect(run.code).toBe(0);
    },
  );

  it('prints a table with the expected answer and result of every step, and a closing verdict', async () => {
    const run = await runCli(['scenario', 'forged-hmac', '--to', apps.express!.url, '--keys', keysFile]);
    const lines = run.stdout.split('\n');
    expect(lines.find((line) => line.startsWith('step'))).toMatch(
      /^step\s+event\s+seq\s+status\s+code\s+a correct receiver answers\s+result$/,
    );
    expect(lines.find((line) => line.startsWith('HMAC with a guessed secret'))).toMatch(
      /401\s+signature_mismatch\s+401 signature_mismatch\s+ok$/,
    );
    expect(lines.find((line) => line.startsWith('the genuine delivery'))).toMatch(/200\s+—\s+2xx\s+ok$/);
    expect(run.stdout).toContain('\u2713 every answer is what a correct receiver gives (3 of 3 steps).');
    expect(run.code).toBe(0);
  });
});

describe('scenario against receivers started by the test', () => {
  it('a receiver that accepts everything fails forged-hmac: exit 1, the differing steps and why', async () => {
    const careless = await startReceiver(() => ({ status: 200, body: { received: true } }));
    started.push(careless);
    const run = await runCli(['scenario', 'forged-hmac', '--to', careless.url, '--keys', keysFile]);
    expect(run.stdout).toMatch(
      /HMAC with a guessed secret\s+data_request.refused\s+0\s+200\s+—\s+401 signature_mismatch\s+DIFFERS/,
    );
    expect(run.stdout).toContain(
      '\u2717 HMAC with a guessed secret: got 200; the MAC does not match the body under the endpoint secret',
    );
    expect(run.stdout).toContain('\u2717 2 of 3 steps answered differently from a correct receiver.');
    expect(run.code).toBe(1);
  });

  it('secret-rotation --phase after: the previous version refused once its overlap ended (signature_version_expired), exit 0', async () => {
    const env = keys.env;
    const ended = await startReceiver({
      secrets: { '1': { secret: env.KYB_SECRET_V1!, notAfter: Date.now() - 60_000 }, '2': env.KYB_SECRET_V2! },
    });
    started.push(ended);
    const { run, result } = await scenario('secret-rotation', ended.url, '--phase', 'after');
    expect(answers(result)).toEqual([
      ['signed with the current secret (kv=2)', 200, null],
      ['signed with the previous secret (kv=1) after the overlap', 401, 'signature_version_expired'],
    ]);
    expect(run.code).toBe(0);
  });

  it('secret-rotation --phase after against an app still in the overlap: exit 1', async () => {
    const { run, result } = await scenario('secret-rotation', apps.koa!.url, '--phase', 'after');
    expect(result.steps[1]).toMatchObject({
      status: 200,
      ok: false,
      expected: ['401 signature_version_expired', '401 signature_unknown_version'],
    });
    expect(run.code).toBe(1);
  });

  describe('a receiver with ordering enforce (the API does not have the missing events yet)', () => {
    let enforcing: Running;
    beforeAll(async () => {
      enforcing = await startReceiver({
        secrets: { '1': keys.env.KYB_SECRET_V1!, '2': keys.env.KYB_SECRET_V2! },
        store: createMemoryStore(),
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [] }),
      });
      started.push(enforcing);
    });

    it('out-of-order --ordering enforce: 409 out_of_order, then seq 0, then seq 1 runs; exit 0', async () => {
      const { run, result } = await scenario('out-of-order', enforcing.url, '--ordering', 'enforce');
      expect(answers(result)).toEqual([
        ['seq 1 before seq 0', 409, 'out_of_order'],
        ['seq 0', 200, null],
        ['seq 1 again (attempt 2)', 200, null],
      ]);
      expect(run.code).toBe(0);
    });

    it('gap --ordering enforce: seq 2 held with 409 out_of_order; exit 0', async () => {
      const { run, result } = await scenario('gap', enforcing.url, '--ordering', 'enforce');
      expect(answers(result)).toEqual([
        ['seq 0', 200, null],
        ['seq 2 (seq 1 missing)', 409, 'out_of_order'],
      ]);
      expect(run.code).toBe(0);
    });

    it('relabelled-attestation against an attested receiver that enforces order: both relabels 401, the genuine release 2xx; exit 0', async () => {
      const attested = await startReceiver({
        secrets: { '1': keys.env.KYB_SECRET_V1!, '2': keys.env.KYB_SECRET_V2! },
        attestation: {
          issuer: keys.env.KYB_ATTESTATION_ISSUER!,
          audience: keys.env.KYB_AUDIENCE!,
          jwksUrl: keys.env.KYB_JWKS_URL!,
        },
        store: createMemoryStore(),
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [] }),
      });
      started.push(attested);
      const { run, result } = await scenario('relabelled-attestation', attested.url);
      expect(answers(result)).toEqual([
        ['attestation under another event_id', 401, 'attestation_relabelled'],
        ['attestation under another seq', 401, 'attestation_relabelled'],
        ['the genuine release', 200, null],
      ]);
      expect(run.code).toBe(0);
    });

    it('gap --ordering off against it: the 409 is not what an "off" receiver answers, exit 1', async () => {
      const { run, result } = await scenario('gap', enforcing.url, '--ordering', 'off');
      expect(result.steps[1]).toMatchObject({
        status: 409,
        code: 'out_of_order',
        ok: false,
        expected: ['2xx (off/detect)'],
      });
      expect(run.code).toBe(1);
    });
  });

  describe('without --ordering, the first mode-dependent answer fixes the mode for the rest', () => {
    it('a receiver that accepts seq 1 ahead (off/detect) but never dedupes: seq 1 again must be "200 duplicate", exit 1', async () => {
      const neverDedupes = await startReceiver(() => ({ status: 200, body: { received: true } }));
      started.push(neverDedupes);
      const { run, result } = await scenario('out-of-order', neverDedupes.url);
      expect(result.steps.map((step) => [step.step, step.ok, step.expected])).toEqual([
        [
          'seq 1 before seq 0',
          true,
          ['2xx (off/detect)', '409 out_of_order (enforce)', '503 backfill_unavailable (enforce)'],
        ],
        ['seq 0', true, ['2xx']],
        ['seq 1 again (attempt 2)', false, ['200 duplicate (off/detect)']],
      ]);
      expect(result).toMatchObject({ ok: false, inferredOrdering: ['off', 'detect'] });
      expect(run.code).toBe(1);
    });

    it('a receiver that held seq 1 (enforce) and then calls its redelivery a duplicate: seq 1 never ran, exit 1', async () => {
      const answers = [
        { status: 409, body: { error: { code: 'out_of_order', message: 'held' } } },
        { status: 200, body: { received: true } },
        { status: 200, body: { received: true, code: 'duplicate' } },
      ];
      const inconsistent = await startReceiver(() => answers.shift() ?? { status: 500, body: {} });
      started.push(inconsistent);
      const run = await runCli(['scenario', 'out-of-order', '--to', inconsistent.url, '--keys', keysFile]);
      expect(run.stdout).toMatch(
        /^seq 1 again \(attempt 2\)\s+data_request\.refused\s+1\s+200\s+duplicate\s+2xx \(enforce\)\s+DIFFERS$/m,
      );
      expect(run.stdout).toContain('Ordering mode, from the answers: enforce (pass --ordering to say which).');
      expect(run.code).toBe(1);
    });

    it('the ordering-enforce receiver passes out-of-order without --ordering too', async () => {
      const enforcing = await startReceiver({
        secrets: { '1': keys.env.KYB_SECRET_V1!, '2': keys.env.KYB_SECRET_V2! },
        store: createMemoryStore(),
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [] }),
      });
      started.push(enforcing);
      const { run, result } = await scenario('out-of-order', enforcing.url);
      expect(result).toMatchObject({ ok: true, inferredOrdering: ['enforce'] });
      expect(run.code).toBe(0);
    });
  });

  describe('a receiver without HMAC secrets (attestation only, spec 5.4)', () => {
    let jwtOnly: Running;
    beforeAll(async () => {
      jwtOnly = await startReceiver({
        attestation: {
          issuer: keys.env.KYB_ATTESTATION_ISSUER!,
          audience: keys.env.KYB_AUDIENCE!,
          jwksUrl: keys.env.KYB_JWKS_URL!,
        },
      });
      started.push(jwtOnly);
    });

    it.each(['forged-hmac', 'gap', 'out-of-order', 'secret-rotation'])(
      '%s reports the precondition (HMAC secrets needed), not DIFFERS; exit 1',
      async (name) => {
        const run = await runCli(['scenario', name, '--to', jwtOnly.url, '--keys', keysFile]);
        expect(run.stdout).toContain(
          '\u2717 precondition: the receiver has no HMAC secrets configured (it answered 200 unauthenticated); this scenario needs them',
        );
        expect(run.stdout).toMatch(/200\s+unauthenticated\s+.*not judged$/m);
        expect(run.stdout).not.toContain('DIFFERS');
        expect(run.code).toBe(1);
      },
    );

    it('the attested scenarios judge it as usual: duplicate passes, exit 0', async () => {
      const { run, result } = await scenario('duplicate', jwtOnly.url);
      expect(answers(result)).toEqual([
        ['release (attempt 1)', 200, null],
        ['same event_id again (attempt 2)', 200, 'duplicate'],
      ]);
      expect(run.code).toBe(0);
    });
  });

  it('on a terminal, an error after the first step starts on a cleared line, not on the progress line', async (context) => {
    const notADirectory = join(dir, 'not-a-directory');
    writeFileSync(notADirectory, '');
    const run = runCliOnTerminal([
      'scenario',
      'forged-hmac',
      '--to',
      apps.express!.url,
      '--keys',
      keysFile,
      '--save',
      notADirectory,
    ]);
    if (run === undefined) return context.skip('util-linux `script` is not installed');
    expect(run.stdout).toContain(
      '[1/3] HMAC with a guessed secret\u2026\r\x1b[2Kkyb-webhooks: Could not write the capture',
    );
    expect(run.stdout).toContain(
      '--save must name a directory you can write. The delivery was sent; its capture was not written.',
    );
    expect(run.code).toBe(1);
  });

  it('an unknown scenario name is a usage error (exit 2) that lists the scenarios', async () => {
    const run = await runCli(['scenario', 'replay-attack', '--to', apps.express!.url, '--keys', keysFile]);
    expect(run.stderr).toContain(
      'Allowed choices are duplicate, out-of-order, gap, forged-hmac, expired-attestation, relabelled-attestation, secret-rotation, unknown-attested-type',
    );
    expect(run.code).toBe(2);
  });
});
