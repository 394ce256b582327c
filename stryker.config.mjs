// Mutation testing (StrykerJS with the vitest runner), not part of CI: `npm run mutate` (core), `npm run mutate --
// adapters|client|login`, or `npm run mutate -- all`. Each target gets its own run, sandbox and report in
// .tmp/mutation/.
//
// Why the settings below:
// - vitest runs through vitest.mutation.config.ts: the root config (so the "@kyb-webhooks/source" condition resolves
//   workspace packages to their TypeScript sources, and the core's "#crypto" imports map picks verify/crypto/node.ts) with
//   only the mutated packages' tests and no database globalSetup.
// - The sandbox is a copy under .tmp/ (ignored by git and eslint). Stryker links every node_modules folder of the
//   workspace into it, so pnpm's per-package dependencies resolve; packages/core/package.json (the "#crypto" map)
//   is copied with the sources, so the mutated copy resolves "#crypto" inside the sandbox.
// - Never in place: other work may be editing the sources while a run is going.
// - verify/crypto/types.ts holds only types; mutating it yields nothing but equivalent mutants.
// - Incremental: each run keeps its results in .tmp/mutation/<name>.incremental.json and the next run with the same
//   name tests again only the mutants whose code or covering tests changed, so a target too large for one sitting
//   (the core: ~5,300 mutants, ~8,000 with the static ones) is measured folder by folder and then kept current.
//   <name> is KYB_MUTATE_NAME (default: the target); give each `--mutate` scope a name of its own, as a run's file
//   holds only the mutants of that run. KYB_MUTATE_FORCE=1 ignores the file once.
// - The sandbox lives in .tmp/stryker/: cleanTempDir removes that whole folder after a run, and the reports beside it
//   must survive.
// - concurrency 2 by default (the machine is shared); KYB_MUTATE_CONCURRENCY overrides it.

import { fileURLToPath } from 'node:url';

const target = process.env.KYB_MUTATE_TARGET ?? 'core';
const ADAPTERS = ['express', 'fastify', 'koa', 'hono', 'node'];
const MUTATE = {
  core: ['packages/core/src/**/*.ts', '!packages/core/src/**/*.test.ts', '!packages/core/src/verify/crypto/types.ts'],
  adapters: ADAPTERS.flatMap((name) => [`packages/${name}/src/**/*.ts`, `!packages/${name}/src/**/*.test.ts`]),
  client: ['packages/client/src/**/*.ts', '!packages/client/src/**/*.test.ts'],
  // testing/ holds the login's test helpers (a sign-in driver), not what users run.
  login: ['packages/login/src/**/*.ts', '!packages/login/src/**/*.test.ts', '!packages/login/src/testing/**'],
};
if (!MUTATE[target])
  throw new Error(`KYB_MUTATE_TARGET must be one of ${Object.keys(MUTATE).join(', ')}; got "${target}".`);
process.env.KYB_MUTATE_TARGET = target;
const name = process.env.KYB_MUTATE_NAME ?? target;
// The folders a `--mutate` scope names (its globs up to the first wildcard), for the test order of
// scripts/mutation-sequencer.ts: their tests run first, so a static mutant is killed before the rest of the suite runs.
const mutateArg = process.argv.findIndex((arg) => arg === '--mutate' || arg === '-m');
const globs = mutateArg >= 0 ? (process.argv[mutateArg + 1] ?? '').split(',') : MUTATE[target];
process.env.KYB_MUTATE_SCOPE = globs
  .filter((glob) => glob && !glob.startsWith('!'))
  .map((glob) => glob.split(/[*{]/)[0].replace(/[^/]*$/, ''))
  .join(',');
if (!/^[\w.-]+$/.test(name))
  throw new Error(`KYB_MUTATE_NAME must be a plain file name (letters, digits, . _ -); got "${name}".`);
// The property-based fuzz suite runs ~100k cases in the test command; a mutant needs far fewer to be caught, and a
// fixed seed makes two mutation runs comparable. Both can be overridden from the environment.
process.env.KYB_FUZZ_RUNS ??= '300';
process.env.KYB_FUZZ_SEED ??= '20261123';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // Resolved from here: under pnpm, Stryker's default plugin glob looks only beside its own (nested) install.
  plugins: [fileURLToPath(import.meta.resolve('@stryker-mutator/vitest-runner'))],
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  mutate: MUTATE[target],
  // Only what the selected tests need is copied into the sandbox.
  ignorePatterns: ['.tmp', 'bench', 'examples', 'tests', 'coverage', '**/dist', 'reports'],
  tempDirName: '.tmp/stryker',
  cleanTempDir: true,
  concurrency: Number(process.env.KYB_MUTATE_CONCURRENCY ?? 2),
  coverageAnalysis: 'perTest',
  // Static mutants sit in code that runs when a module loads (the zod schemas, the schema guards compiled from them
  // at import, error tables): no single test covers them, so each one reruns every test of the target, about 15 s
  // for the core, and the core has ~2,500 of them (10 CPU hours). They are skipped unless KYB_MUTATE_STATIC=1; the
  // schema tests (events, schema-guard, boundaries) are what guards that code.
  ignoreStatic: process.env.KYB_MUTATE_STATIC !== '1',
  timeoutMS: 10_000,
  incremental: true,
  incrementalFile: `.tmp/mutation/${name}.incremental.json`,
  force: process.env.KYB_MUTATE_FORCE === '1',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `.tmp/mutation/${name}.html` },
  jsonReporter: { fileName: `.tmp/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  thresholds: { high: 90, low: 80, break: null },
};
