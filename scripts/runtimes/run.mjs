#!/usr/bin/env node
// Runs the receiver's suites on every runtime we claim besides the Node that runs the rest of the test command:
// Node 22, 24 and 26, Bun, Deno and workerd, all pinned in tests/runtimes/package.json and installed here from the npm
// registry with plain npm (that folder is not part of the pnpm workspace, so the root lockfile is untouched).
//   - Node 22/24/26, Bun, Deno: vitest itself on that runtime over packages/core and packages/hono (fuzzing at 0.05x);
//   - workerd: the receiver's suites bundled for workers, run by vitest's runner inside workerd (./workerd.mjs);
//   - Bun, Deno, workerd: the adapter conformance cases against a Hono app and against createFetchHandler, each served
//     by that runtime (./hono-remote.mjs);
//   - Bun, Deno: the fetch example (examples/fetch) started on that runtime and sent signed deliveries (./examples.mjs).
// This machine's Node gets a row too: from the tests step's report when scripts/run.mjs passes it, else a run.
//
//   node scripts/runtimes/run.mjs            every runtime
//   node scripts/runtimes/run.mjs bun deno   only these (names as in the table)
//
// Under CI=true a runtime that cannot start fails the run; elsewhere (e.g. a machine that is not linux-x64, for which
// the pinned binaries do not exist) it is skipped with a message saying how to enable it.
// Closes with one line: "runtimes: N passed, N failed" (N counts runtimes; a runtime passes when every suite it ran
// passed at least one test and failed none).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokenFiles, runWorkerd } from './workerd.mjs';
import { runFetchRemote, runHonoRemote } from './hono-remote.mjs';
import { runFetchExample } from './examples.mjs';
import { installPinnedRuntimes } from './install.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const project = join(root, 'tests', 'runtimes');
const modules = join(project, 'node_modules');
const out = join(root, '.tmp', 'runtimes');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const vitestConfig = join(project, 'vitest.config.ts');
const ci = /^(1|true|yes)$/i.test(process.env.CI ?? '');
/**
 * The receiver's suites and the Hono adapter's, as the main test step runs them on this machine's Node, and the
 * client's tracing-channel test (the core's channel tests are in packages/core).
 */
const SUITES = ['packages/core', 'packages/hono', 'packages/client/src/http.channels.test.ts'];

const RUNTIMES = [
  { name: 'node (this machine)', bin: process.execPath, prefix: [], kind: 'node' },
  { name: 'node 22', bin: join(modules, 'node22', 'bin', 'node'), prefix: [], kind: 'node' },
  { name: 'node 24', bin: join(modules, 'node24', 'bin', 'node'), prefix: [], kind: 'node' },
  { name: 'node 26', bin: join(modules, 'node26', 'bin', 'node'), prefix: [], kind: 'node' },
  { name: 'bun', bin: join(modules, '.bin', 'bun'), prefix: [], kind: 'bun' },
  { name: 'deno', bin: join(modules, '.bin', 'deno'), prefix: ['run', '-A'], kind: 'deno' },
  { name: 'workerd', bin: join(modules, '.bin', 'workerd'), kind: 'workerd' },
];

function version(runtime) {
  const result = spawnSync(runtime.bin, ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  const first = result.stdout.trim().split('\n')[0];
  return first.match(/\d+\.\d+\.\d+/)?.[0] ?? first.replace(/^\w+ /, '');
}

/** The same counts from the JSON report of the test command's own run (this machine's Node), for the same suites. */
function fromMainRun(file) {
  const results = JSON.parse(readFileSync(file, 'utf8'));
  const files = results.testResults.filter((entry) =>
    SUITES.some((suite) => entry.name.startsWith(join(root, suite) + '/')),
  );
  if (files.length === 0) return undefined; // the tests step ran with a filter that left these suites out
  const tests = files.flatMap((entry) => entry.assertionResults);
  return {
    suites: `core + hono, ${files.length} files (the tests step)`,
    passed: tests.filter((test) => test.status === 'passed').length,
    failed: tests.filter((test) => test.status === 'failed').length + brokenFiles({ testResults: files }),
  };
}

/** Vitest itself on the runtime, over the suites; the probe file proves the test workers ran there too. */
function runVitest(runtime) {
  const json = join(out, `${runtime.name.replace(/\W+/g, '-')}.json`);
  const probe = `${json}.probe`;
  rmSync(probe, { force: true });
  const args = [
    ...runtime.prefix,
    vitest,
    'run',
    '--config',
    vitestConfig,
    '--reporter=dot',
    '--reporter=json',
    `--outputFile.json=${json}`,
    ...SUITES,
  ];
  // The fuzz properties run here too, at a twentieth of their cases (the full count runs once, in the tests step).
  const env = { KYB_FUZZ_RUNS: '0.05x', ...process.env, KYB_RUNTIME_PROBE: probe };
  console.log(`\n› ${runtime.name}: ${[runtime.bin, ...args].map((part) => part.replace(root + '/', '')).join(' ')}`);
  rmSync(json, { force: true });
  spawnSync(runtime.bin, args, { cwd: root, stdio: 'inherit', env });
  if (!existsSync(json))
    return { suites: 'core + hono (vitest)', passed: 0, failed: 1, note: 'vitest wrote no results' };
  const results = JSON.parse(readFileSync(json, 'utf8'));
  const seen = existsSync(probe) ? [...new Set(readFileSync(probe, 'utf8').trim().split('\n'))] : [];
  const expected = runtime.kind === 'node' ? `node ${runtime.version}` : `${runtime.kind} ${runtime.version}`;
  const wrongRuntime = seen.length === 0 || seen.some((line) => line !== expected);
  return {
    suites: `core + hono, ${results.testResults.length} files (vitest)`,
    passed: results.numPassedTests,
    // A failed file (e.g. an import error) has no failed test, so it counts as one failure.
    failed: results.numFailedTests + brokenFiles(results) + (wrongRuntime ? 1 : 0),
    note: wrongRuntime ? `test workers ran on ${seen.join(', ') || 'nothing'}, not ${expected}` : undefined,
  };
}

/** Set by scripts/run.mjs: this machine's Node already ran the suites in the tests step, so its row reuses them. */
const mainResults = process.env.KYB_MAIN_TEST_RESULTS;
const wanted = process.argv.slice(2);
// Names are matched without spaces, so `node22` and 'node 22' both pick Node 22; a name that picks nothing is refused
// rather than reported as "0 passed, 0 failed".
const compact = (name) => name.replace(/\s+/g, '').toLowerCase();
const picks = (runtime, name) => compact(runtime.name).startsWith(compact(name));
const unknown = wanted.filter((name) => !RUNTIMES.some((runtime) => picks(runtime, name)));
if (unknown.length) {
  console.error(
    `runtimes: no runtime named ${unknown.join(', ')}; ` +
      'choose from node22, node24, node26, bun, deno, workerd (or none for all)',
  );
  process.exit(2);
}
const selected = wanted.length ? RUNTIMES.filter((runtime) => wanted.some((name) => picks(runtime, name))) : RUNTIMES;
mkdirSync(out, { recursive: true });
const rows = [];
const supported = platform() === 'linux' && arch() === 'x64';
const installed = supported ? installPinnedRuntimes() : false;
for (const runtime of selected) {
  runtime.version = existsSync(runtime.bin) ? version(runtime) : undefined;
  if (!runtime.version) {
    const why = !supported
      ? `the pinned binaries are for linux-x64 and this is ${platform()}-${arch()}: run on linux-x64 (as CI does) to enable it`
      : !installed
        ? 'npm install in tests/runtimes failed (see above): fix the install and rerun'
        : `${runtime.bin} does not start: delete tests/runtimes/node_modules and rerun to reinstall it`;
    rows.push({
      runtime,
      version: '-',
      suites: '-',
      passed: 0,
      failed: ci ? 1 : 0,
      note: `${ci ? 'FAILED' : 'skipped'}: ${why}`,
      skipped: !ci,
    });
    continue;
  }
  const results = [];
  if (runtime.kind === 'workerd') {
    results.push(await runWorkerd({ root, bin: runtime.bin, out }));
    results.push(await runWorkerd({ root, bin: runtime.bin, out, nodejsCompat: true }));
  } else if (
    runtime.name === 'node (this machine)' &&
    mainResults &&
    existsSync(mainResults) &&
    fromMainRun(mainResults)
  ) {
    results.push(fromMainRun(mainResults));
  } else {
    results.push(runVitest(runtime));
  }
  if (['bun', 'deno', 'workerd'].includes(runtime.kind)) {
    results.push(await runHonoRemote({ root, runtime: runtime.kind, bin: runtime.bin, out, vitest, project }));
    results.push(await runFetchRemote({ root, runtime: runtime.kind, bin: runtime.bin, out, vitest, project }));
  }
  if (['bun', 'deno'].includes(runtime.kind)) {
    results.push(await runFetchExample({ root, runtime: runtime.kind, bin: runtime.bin, out }));
  }
  for (const result of results) rows.push({ runtime, version: runtime.version, ...result });
}

const table = [
  ['runtime', 'version', 'suites', 'passed', 'failed'],
  ...rows.map((row) => [row.runtime.name, row.version, row.suites, String(row.passed), String(row.failed)]),
];
const widths = table[0].map((_, column) => Math.max(...table.map((line) => line[column].length)));
console.log(
  '\n' +
    table
      .map((line) =>
        line
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n'),
);
for (const row of rows) if (row.note) console.log(`  ${row.runtime.name}: ${row.note}`);
const byRuntime = new Map();
for (const row of rows) {
  const ok = row.skipped || (row.failed === 0 && row.passed > 0);
  byRuntime.set(row.runtime.name, (byRuntime.get(row.runtime.name) ?? true) && ok);
}
const skipped = new Set(
  [...byRuntime.keys()].filter((name) => rows.filter((row) => row.runtime.name === name).every((row) => row.skipped)),
);
const passed = [...byRuntime].filter(([name, ok]) => ok && !skipped.has(name)).length;
const failed = [...byRuntime].filter(([, ok]) => !ok).length;
console.log(`\nruntimes: ${passed} passed, ${failed} failed${skipped.size ? `, ${skipped.size} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
