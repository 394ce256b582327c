#!/usr/bin/env node
// The README's commands, runnable on a fresh machine with only Node and npm: finds or fetches pnpm 10, installs the
// workspace from the lockfile when needed, then runs the task.
//   node scripts/run.mjs demo [framework] [sqlite] [--queue[=pgboss|bullmq]]   the demo scenario (default: express,
//                                                    memory store, inline; --queue: queue mode with a worker)
//   node scripts/run.mjs demo [framework] login      sign in to the example through a local login server
//   node scripts/run.mjs build              build every package under packages/ (tsup: ESM, CJS, types)
//   node scripts/run.mjs pack               build, then write an installable tarball of every package to .tmp/packs/
//   node scripts/run.mjs test               typecheck, lint, format check, build, package checks, every test, the
//                                           other runtimes, the tarballs installed with npm (tests/tarballs)
//   node scripts/run.mjs bench              the benchmarks
//   node scripts/run.mjs mutate [core|adapters|client|login|all] [stryker options]   mutation testing (not in CI)
//   node scripts/run.mjs cli <command> [options]       the kyb-webhooks CLI from this clone (in the folder npm ran in)
//   node scripts/run.mjs example [framework] [--queue[=pgboss|bullmq]]   an example app as a dev server, configured
//                                                    by the environment (--queue: queue mode, a worker in the process)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '10.34.9';
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`kyb-webhooks needs Node 20.19 or newer; this is ${process.version}.`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function pnpmCommand() {
  const found = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (found.status === 0 && found.stdout.trim().startsWith('10.')) return ['pnpm', []];
  // No pnpm 10 on PATH: npx fetches the pinned version from the npm registry (corepack is not needed).
  return ['npx', ['--yes', `pnpm@${PNPM_VERSION}`]];
}

const [pnpm, pnpmPrefix] = pnpmCommand();
const pnpmRun = (...args) => {
  const options = typeof args.at(-1) === 'object' ? args.pop() : {};
  return run(pnpm, [...pnpmPrefix, ...args], options);
};

/**
 * Runs a long-lived child (an example app, the CLI) and resolves its exit code. A SIGTERM, SIGINT or SIGHUP sent to
 * this runner is passed on to the child, so `kill <pid of npm run example>` stops the app and frees its port instead of
 * leaving it orphaned (spawnSync would block this process's own signal handling).
 */
function runForwardingSignals(command, args, options = {}) {
  const child = spawn(command, args, { cwd: root, stdio: 'inherit', ...options });
  const forward = (signal) => child.kill(signal);
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const signal of signals) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      for (const name of signals) process.off(name, forward);
      resolve(code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1));
    });
  });
}

/** Runs a TypeScript entry of the workspace from its sources, as the tests do: tsx, and the packages' source exports. */
function runFromSource(entry, args, cwd) {
  const tsx = pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;
  return runForwardingSignals(
    process.execPath,
    ['--conditions=@kyb-webhooks/source', '--import', tsx, entry, ...args],
    { cwd },
  );
}

function ensureInstalled() {
  const marker = join(root, 'node_modules', '.modules.yaml');
  const lockfile = join(root, 'pnpm-lock.yaml');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lockfile).mtimeMs) return;
  // On stderr, so that `npm run -s cli -- keys --export > .env.kyb` writes only the variables, even on a first run.
  console.error('› installing the workspace (pnpm install --frozen-lockfile)');
  const status = pnpmRun('install', '--frozen-lockfile', { stdio: ['inherit', process.stderr, 'inherit'] });
  if (status !== 0) process.exit(status);
}

function steps(list) {
  for (const [title, args, options = {}] of list) {
    console.log(`\n› ${title}`);
    const status = pnpmRun(...args, options);
    if (status !== 0) {
      console.error(`\n✗ ${title} failed (exit ${status})`);
      process.exit(status);
    }
  }
}

const RESULTS = join(root, '.tmp', 'vitest-results.json');
/** Every package under packages/, built: the root `build` script and a step of `test`, `bench` and `pack`. */
const BUILD = ['-r', '--filter', './packages/*', 'run', 'build'];
/** publint and arethetypeswrong over every package: the root `check:packages` script and a step of `test`. */
const CHECK_PACKAGES = ['-r', '--filter', './packages/*', 'run', 'check:package'];
/** Where `pack` writes the tarballs (git-ignored, emptied first); tests/tarballs installs them from here. */
const PACKS = join(root, '.tmp', 'packs');

/**
 * Writes a tarball of every publishable package under packages/ (built beforehand) into PACKS with `pnpm pack`, which
 * replaces the `workspace:^` ranges with the packages' versions (`npm pack` keeps them, and npm cannot install those).
 * Returns the tarballs' paths.
 */
function packTarballs() {
  rmSync(PACKS, { recursive: true, force: true });
  mkdirSync(PACKS, { recursive: true });
  const publishable = readdirSync(join(root, 'packages')).filter((name) => {
    const manifest = join(root, 'packages', name, 'package.json');
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).private !== true;
  });
  steps([
    [
      `pack (${publishable.length} packages into ${PACKS.replace(root + '/', '')})`,
      ['-r', ...publishable.flatMap((name) => ['--filter', `./packages/${name}`]), 'pack', '--pack-destination', PACKS],
      { stdio: ['inherit', 'ignore', 'inherit'] },
    ],
  ]);
  const tarballs = readdirSync(PACKS)
    .filter((name) => name.endsWith('.tgz'))
    .sort()
    .map((name) => join(PACKS, name));
  if (tarballs.length !== publishable.length) {
    console.error(`✗ pack wrote ${tarballs.length} tarballs for ${publishable.length} packages`);
    process.exit(1);
  }
  return tarballs;
}

/**
 * StrykerJS 10 needs Node 22 or newer, while the workspace supports Node 20.19. On an older Node, the mutation task
 * runs on the Node 22 binary that the runtimes step pins in tests/runtimes (an npm package, installed there with
 * `npm install --no-save` from its lockfile, as that step does), so nothing is downloaded from outside the registry.
 */
function nodeForStryker() {
  if (major >= 22) return process.execPath;
  const project = join(root, 'tests', 'runtimes');
  const pinned = join(project, 'node_modules', 'node22', 'bin', 'node');
  if (!existsSync(pinned) && existsSync(join(project, 'package-lock.json'))) {
    console.log(
      `› StrykerJS needs Node 22+ (this is ${process.version}): installing the pinned runtimes (npm install in tests/runtimes)`,
    );
    // As the runtimes step does: `npm ci` refuses a lockfile whose other-platform binaries a mirror cannot serve.
    spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund'], { cwd: project, stdio: 'inherit' });
  }
  if (!existsSync(pinned)) {
    console.error(
      `Mutation testing needs Node 22 or newer (StrykerJS 10); this is ${process.version}. Run \`npm run mutate\` with Node 22+.`,
    );
    process.exit(1);
  }
  return pinned;
}

/** One plain closing line, readable by any CI: "tests: N passed, N failed, N skipped". */
/**
 * The tarball names (`kyb-webhooks-express`) of the given packages (`express`) and of the @kyb-webhooks packages they
 * depend on, directly or not, as their package.json files say.
 */
function withDependencies(names) {
  const found = new Set();
  const visit = (name) => {
    if (found.has(name)) return;
    found.add(name);
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'));
    for (const dependency of Object.keys(manifest.dependencies ?? {}))
      if (dependency.startsWith('@kyb-webhooks/')) visit(dependency.slice('@kyb-webhooks/'.length));
  };
  for (const name of names) visit(name);
  return [...found].sort().map((name) => `kyb-webhooks-${name}`);
}

/** The tarball tests (tests/tarballs) on the tarballs in PACKS; the npm installs run in their global setup. */
function runTarballTests(args) {
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  return run(process.execPath, [
    vitest,
    'run',
    '--config',
    join(root, 'tests', 'tarballs', 'vitest.config.ts'),
    ...args,
  ]);
}

function printTotals() {
  const results = JSON.parse(readFileSync(RESULTS, 'utf8'));
  const skipped = results.numPendingTests + results.numTodoTests;
  console.log(`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`);
}

const [task = 'test', ...rest] = process.argv.slice(2);
ensureInstalled();
switch (task) {
  case 'demo': {
    // `demo login` is the Express example's login demo, as `demo` alone is its webhook demo.
    // The framework is the first word that is not an option or a mode: `demo -- --queue` is Express's too.
    const [framework = 'express', ...demoArgs] = /^(-|login$|sqlite$)/.test(rest[0] ?? '-')
      ? ['express', ...rest]
      : rest;
    steps([[`demo (${framework})`, ['--filter', `@kyb-webhooks/example-${framework}`, 'run', 'demo', ...demoArgs]]]);
    break;
  }
  case 'test':
    steps([
      ['typecheck', ['run', 'typecheck']],
      ['lint', ['run', 'lint']],
      ['format check (prettier --check; npm run format fixes it)', ['run', 'format:check']],
      ['build', BUILD],
      ['package checks (publint, arethetypeswrong)', CHECK_PACKAGES],
      ['tests', ['run', 'test:unit', '--reporter=default', '--reporter=json', `--outputFile.json=${RESULTS}`, ...rest]],
    ]);
    {
      // The suites again on every other runtime we claim, installed from npm by the script; it ends with its table
      // and "runtimes: N passed, N failed". The test totals stay the last line.
      console.log('\n› runtimes (Node 22, 24 and 26, Bun, Deno, workerd)');
      const runtimes = run(process.execPath, [join(root, 'scripts', 'runtimes', 'run.mjs')], {
        env: { ...process.env, KYB_MAIN_TEST_RESULTS: RESULTS },
      });
      // The packages as a user installs them: tarballs installed with plain npm into new CommonJS and ESM folders
      // outside the repository, the READMEs' quick starts run there and sent signed deliveries (tests/tarballs).
      packTarballs();
      console.log('\n› tarballs (npm install of the packs into npm init -y folders, the quick starts run there)');
      const tarballs = runTarballTests([]);
      printTotals();
      if (runtimes !== 0) process.exit(runtimes);
      if (tarballs !== 0) process.exit(tarballs);
    }
    break;
  case 'build':
    steps([['build', BUILD]]);
    break;
  case 'check:packages':
    steps([['package checks (publint, arethetypeswrong)', CHECK_PACKAGES]]);
    break;
  case 'pack': {
    steps([['build', BUILD]]);
    const tarballs = packTarballs();
    console.log(`\n${tarballs.length} tarballs in ${PACKS}:`);
    for (const tarball of tarballs) console.log(`  ${tarball.replace(PACKS + '/', '')}`);
    // npm takes a package's range on another (^0.1.0) from a tarball given in the same command, so each line names
    // the packages it installs and every @kyb-webhooks package they depend on.
    const line = (names) =>
      withDependencies(names).map((name) => tarballs.find((tarball) => new RegExp(`/${name}-\\d`).test(tarball)));
    console.log(`\nInstall them in your project with npm, in one command, e.g. for Express with the CLI and tsx:`);
    console.log(`  npm i ${line(['express', 'cli']).join(' ')} express tsx`);
    console.log(
      `(a package needs the tarballs of the @kyb-webhooks packages it depends on in the same command: docs/releasing.md)`,
    );
    break;
  }
  case 'bench':
    // The HTTP servers measure the built packages, as users install them.
    steps([
      ['build', BUILD],
      ['bench', ['--filter', '@kyb-webhooks/bench', 'run', 'bench', ...rest]],
    ]);
    break;
  case 'mutate': {
    // Mutation testing with StrykerJS (stryker.config.mjs): minutes of CPU per target and a score for people to read,
    // so it is a command of its own and not a step of `test`.
    const [which, ...strykerArgs] = rest[0] === undefined || rest[0].startsWith('-') ? ['core', ...rest] : rest;
    const known = ['core', 'adapters', 'client', 'login'];
    const targets = which === 'all' ? known : [which];
    for (const target of targets) {
      if (!known.includes(target)) {
        console.error(`unknown mutation target "${target}": use ${known.join(', ')} or all`);
        process.exit(2);
      }
      console.log(
        `\n› mutation testing (${target}); report in .tmp/mutation/${process.env.KYB_MUTATE_NAME ?? target}.html`,
      );
      const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
      const status = run(nodeForStryker(), [stryker, 'run', 'stryker.config.mjs', ...strykerArgs], {
        env: { ...process.env, KYB_MUTATE_TARGET: target },
      });
      if (status !== 0) process.exit(status);
    }
    break;
  }
  case 'cli':
    // Before the packages are published: the CLI from this clone, run in the folder `npm run` was called from (npm
    // says which in INIT_CWD), so its development keys (.kyb-webhooks/) land there, as with an installed CLI.
    process.exit(
      await runFromSource(join(root, 'packages', 'cli', 'src', 'cli.ts'), rest, process.env.INIT_CWD ?? process.cwd()),
    );
    break;
  case 'example': {
    // An example app as a dev server on 127.0.0.1 (PORT, default 3000), configured by the environment that
    // `npm run -s cli -- keys --export` prints; the CLI can then send it deliveries.
    // `--queue` (`--queue=pgboss`, `--queue=bullmq`) runs it in queue mode with a worker (examples/shared/src/queue.ts).
    const [framework = 'express', ...appArgs] = (rest[0] ?? '-').startsWith('-') ? ['express', ...rest] : rest;
    const dir = join(root, 'examples', framework);
    if (!existsSync(join(dir, 'src', 'server.ts'))) {
      console.error(`no example app "${framework}": use express, fastify, koa, hono, node-http or nextjs`);
      process.exit(2);
    }
    process.exit(await runFromSource(join(dir, 'src', 'server.ts'), appArgs, dir));
    break;
  }
  default:
    console.error(`unknown task "${task}": use demo, test, build, pack, bench, mutate, cli or example`);
    process.exit(2);
}
