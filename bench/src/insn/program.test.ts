import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_NOW_MS } from '../clock.js';
import { createBenchSigner, signPool } from '../fixtures.js';
import { buildProgram } from './build.js';
import { setupOf, signOrderedPool, writeFixture } from './fixture.js';
import { NODE_FLAGS } from './callgrind.js';
import type { RunSpec } from './protocol.js';

// The programs the insn section runs under callgrind, run here without valgrind: each subject must answer every
// fixture delivery with 200 (or the figures would count rejections), and a rejected delivery must fail the run.
let program: string;
const dir = mkdtempSync(join(tmpdir(), 'kyb-insn-test-'));
const fixture = {
  hmac: join(dir, 'hmac.json'),
  attested: join(dir, 'attested.json'),
  ordered: join(dir, 'ordered.json'),
  gapped: join(dir, 'gapped.json'),
  forged: join(dir, 'forged.json'),
};

beforeAll(async () => {
  program = await buildProgram();
  const signer = await createBenchSigner();
  const setup = setupOf(signer);
  writeFixture(fixture.hmac, setup, await signPool(signer, 'hmac', 3, 1024));
  writeFixture(fixture.attested, setup, await signPool(signer, 'attested', 3, 1024));
  const ordered = await signOrderedPool(signer, 3, 1024);
  writeFixture(fixture.ordered, setup, ordered);
  writeFixture(fixture.gapped, setup, ordered.slice(1));
  const [genuine] = await signPool(signer, 'hmac', 1, 1024);
  const forged = { ...genuine!, body: new TextEncoder().encode(genuine!.text.replace('"seq":', '"seq" :')) };
  writeFixture(fixture.forged, setup, [forged]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(spec: Omit<RunSpec, 'importOnly'>, importOnly = false) {
  return spawnSync(process.execPath, [...NODE_FLAGS, program, JSON.stringify({ ...spec, importOnly })], {
    encoding: 'utf8',
    env: { ...process.env, KYB_BENCH_NOW_MS: String(BENCH_NOW_MS) },
  });
}

describe('the callgrind program', () => {
  it.each([
    ['hand', 'hmac'],
    ['stripe', 'hmac'],
    ['ours', 'hmac'],
    ['ours-fetch', 'hmac'],
    ['hand', 'attested'],
    ['ours', 'attested'],
    ['ours', 'ordered'],
    ['ours-enforce', 'ordered'],
    ['ours-otel-noop', 'hmac'],
    ['ours-otel-sdk', 'hmac'],
    ['ours-channel', 'hmac'],
  ] as const)('%s answers every %s delivery with 200', (subject, kind) => {
    const result = run({ subject, kind, fixture: fixture[kind], count: 3 });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it.each(['hand', 'stripe', 'ours', 'ours-fetch', 'ours-otel-noop', 'ours-otel-sdk', 'ours-channel'] as const)(
    '%s fails the run on a delivery it rejects (a body changed after signing)',
    (subject) => {
      const result = run({ subject, kind: 'hmac', fixture: fixture.forged, count: 1 });
      expect(result.stderr).toContain(`${subject} answered delivery 0 with 401, not 200`);
      expect(result.status).not.toBe(0);
    },
  );

  it('ours-enforce fails the run on a stream with a gap (seq 0 left out): in order is what the fixture promises', () => {
    const result = run({ subject: 'ours-enforce', kind: 'ordered', fixture: fixture.gapped, count: 1 });
    expect(result.stderr).toMatch(/ours-enforce answered delivery 0 with 5\d\d, not 200/);
    expect(result.status).not.toBe(0);
  });

  it('refuses a run longer than its fixture', () => {
    const result = run({ subject: 'hand', kind: 'hmac', fixture: fixture.hmac, count: 4 });
    expect(result.stderr).toContain('the fixture holds 3 deliveries, not 4');
  });

  it('an import-only run answers nothing, so a forged fixture passes', () => {
    expect(run({ subject: 'ours', kind: 'hmac', fixture: fixture.forged, count: 1 }, true).status).toBe(0);
  });
});
