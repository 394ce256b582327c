/**
 * The READMEs' code cannot drift from the code: every ```ts block of README.md, docs/*.md and packages/*\/README.md is
 * typechecked against the packages' sources, and every ```ts quickstart block is started as its own process, sent a
 * signed, attested delivery, and must answer 200 and run its handler. See ./readme-blocks.ts for the info strings.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  createTestSigner,
  randomSecret,
  startJwksServer,
  type JwksServer,
  type TestSigner,
} from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBlocks, removeStaleRuns, writeBlocks, type WrittenBlock } from './block-workspace.js';
import { allReadmeBlocks, describeBlock, REPO_ROOT, type ReadmeBlock } from './readme-blocks.js';
import { runQuickstart, runQuickstartOnTakenPort } from './run-quickstart.js';
import { typecheckBlocks } from './typecheck-blocks.js';

/**
 * Sections of READMEs another helper is rewriting this session whose blocks do not compile yet: reported as pending
 * instead of failing the run. Remove an entry to enforce it (the goal: this list empty).
 */
const PENDING: readonly { readme: string; heading: string; why: string }[] = [];
const isPending = (block: ReadmeBlock) => PENDING.some((p) => p.readme === block.readme && p.heading === block.heading);

const blocks = allReadmeBlocks().filter((b) => !isPending(b));
const checked = blocks.filter((b) => b.kind !== 'fragment');
const quickstarts = blocks.filter((b) => b.kind === 'quickstart');
const fragments = blocks.filter((b) => b.kind === 'fragment');
// The READMEs of a webhook entry point must show a server that runs: the root one, the core's, one per framework,
// and the plain Node one once it has a README.
const MUST_HAVE_QUICKSTART = [
  'README.md',
  'packages/core/README.md',
  'packages/express/README.md',
  'packages/fastify/README.md',
  'packages/koa/README.md',
  'packages/hono/README.md',
  'packages/node/README.md',
].filter((readme) => existsSync(join(REPO_ROOT, readme)));

const run = `run-${process.pid}-${randomUUID().slice(0, 8)}`;
let written: WrittenBlock[] = [];
let errors = new Map<ReadmeBlock, string[]>();

beforeAll(() => {
  removeStaleRuns();
  const started = performance.now();
  written = writeBlocks(checked, run);
  errors = typecheckBlocks(written);
  console.info(
    `README code blocks: ${checked.length} typechecked in ${((performance.now() - started) / 1000).toFixed(1)} s ` +
      `(${quickstarts.length} of them run as quick starts), ` +
      `${fragments.length} fragments skipped${fragments.length ? `: ${fragments.map(describeBlock).join('; ')}` : ''}`,
  );
  for (const { readme, heading, why } of PENDING)
    console.warn(`README code blocks NOT checked, pending a fix: ${readme} (${heading}): ${why}`);
}, 180_000);

afterAll(() => removeBlocks(run));

describe('README code blocks', () => {
  it.each(MUST_HAVE_QUICKSTART)('%s has a quick start that runs (```ts quickstart)', (readme) => {
    expect(quickstarts.filter((b) => b.readme === readme).length).toBeGreaterThan(0);
  });

  it.each(blocks.filter((b) => /quick ?start/i.test(b.heading)).map((b) => [describeBlock(b), b] as const))(
    '%s, under a quick-start heading, is complete code (not a fragment)',
    (_name, block) => {
      expect(block.kind).not.toBe('fragment');
    },
  );

  it.each(checked.map((b) => [describeBlock(b), b] as const))('%s typechecks', (_name, block) => {
    expect(errors.get(block) ?? ['not checked']).toEqual([]);
  });
});

describe.concurrent('README quick starts run', () => {
  let signer: TestSigner;
  let jwks: JwksServer;
  beforeAll(async () => {
    // Two secret versions, as during a rotation and as `kyb-webhooks keys` prints them; deliveries use the newer.
    signer = await createTestSigner({ secrets: { '1': randomSecret(), '2': randomSecret() } });
    jwks = await startJwksServer(signer.jwks);
  });
  afterAll(async () => {
    await jwks?.close();
  });

  it.each(quickstarts.map((b) => [describeBlock(b), b] as const))(
    '%s answers a signed, attested release 200 and its handler prints the request id',
    async (_name, block) => {
      // A block that does not typecheck would only fail here less clearly.
      expect(errors.get(block)).toEqual([]);
      const entry = written.find((w) => w.block === block) as WrittenBlock;
      const outcome = await runQuickstart(entry.file, { signer, jwksUrl: jwks.url, path: block.path });
      const report = `${outcome.failure ?? ''}\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}\n--- response\n${outcome.responseBody}`;
      expect({ status: outcome.status, body: outcome.responseBody }, report).toEqual({
        status: 200,
        body: '{"received":true}',
      });
      expect(outcome.stdout, report).toContain(outcome.requestId);
    },
    // Generous: under the whole suite's load a cold tsx start of the packages' sources can take tens of seconds.
    150_000,
  );

  // Express 5 hands a listen error to the listen callback, so a callback that ignores it printed "KYB webhooks on
  // http://…" and exited 0 when another server held the port: the developer then talks to that other server.
  it.each(quickstarts.map((b) => [describeBlock(b), b] as const))(
    '%s, started on a port another server holds, exits with an error instead of saying it listens',
    async (_name, block) => {
      const entry = written.find((w) => w.block === block) as WrittenBlock;
      const outcome = await runQuickstartOnTakenPort(entry.file, { signer, jwksUrl: jwks.url });
      const report = `--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`;
      expect(outcome.exitCode, report).not.toBe(0);
      expect(outcome.exitCode, report).not.toBeNull();
      expect(outcome.stderr, report).toContain('EADDRINUSE');
      expect(outcome.stdout, report).not.toMatch(/listening|webhooks on/i);
    },
    150_000,
  );

  // The issue this guards: an unset secret used to crash with a bare TypeError.
  it.each(['KYB_SECRET_V1', 'KYB_JWKS_URL'])(
    'the root quick start started without %s exits, naming the variable to set',
    async (name) => {
      const root = quickstarts.find((b) => b.readme === 'README.md') as ReadmeBlock;
      const entry = written.find((w) => w.block === root) as WrittenBlock;
      const unset =
        name === 'KYB_SECRET_V1' ? Object.keys(signer.secrets).map((version) => `KYB_SECRET_V${version}`) : [name];
      const outcome = await runQuickstart(entry.file, { signer, jwksUrl: jwks.url, path: root.path, unset });
      expect(outcome.exitCode, outcome.stderr).toBe(1); // Node's exit code for an uncaught error, before it listened
      expect(outcome.stderr).toContain(`Error: Set ${name === 'KYB_SECRET_V1' ? 'KYB_SECRET_V<kv>' : name}`);
    },
    150_000,
  );
});
