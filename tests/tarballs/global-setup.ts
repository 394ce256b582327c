/**
 * Installs the packages as a user does before they are on npm: the tarballs `npm run pack` wrote to `.tmp/packs/`,
 * with plain npm, into two new folders outside the repository made by `npm init -y`: one left CommonJS (npm's
 * default) and one with `"type": "module"`. The frameworks the quick starts use and tsx come from the npm registry in
 * the same `npm install`, as the README's install lines say. The tests (./quickstarts.tarball.ts) run there.
 *
 * Without the registry the tests are skipped with a message saying how to enable them; under CI=true (and whenever
 * the registry answers) a failed install fails the run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../docs/readme-blocks.js';

export const FLAVOURS = ['commonjs', 'module'] as const;
export type Flavour = (typeof FLAVOURS)[number];

export interface TarballInstall {
  /** Why the tests are skipped, when they are. */
  skipped?: string;
  /** The two install folders, by the package's module type. */
  dirs: Record<Flavour, string>;
  /** The tarballs installed, by file name. */
  tarballs: string[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    tarballs: TarballInstall;
  }
}

export const PACKS = join(REPO_ROOT, '.tmp', 'packs');
/** What the README's install lines add to the tarballs for the quick starts: the frameworks, and tsx to run them. */
export const THIRD_PARTY = ['express', 'fastify', 'koa', 'hono', '@hono/node-server', 'tsx'];

const ci = /^(1|true|yes)$/i.test(process.env.CI ?? '');

/** npm's environment without what `npm test` exported about the repository (its prefix), so npm sees the new folder. */
export function npmEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.npm_config_local_prefix;
  delete env.npm_package_json;
  return env;
}

function npm(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

async function prepare(dir: string, flavour: Flavour, tarballs: string[]): Promise<void> {
  mkdirSync(dir);
  const init = await npm(['init', '-y'], dir);
  if (init.code !== 0) throw new Error(`npm init -y failed in ${dir}:\n${init.output}`);
  if (flavour === 'module') {
    const set = await npm(['pkg', 'set', 'type=module'], dir);
    if (set.code !== 0) throw new Error(`npm pkg set type=module failed in ${dir}:\n${set.output}`);
  }
  const type = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs';
  if (type !== flavour) throw new Error(`${dir}/package.json has "type": "${type}", expected ${flavour}`);
  const started = performance.now();
  const install = await npm(
    ['install', '--no-audit', '--no-fund', ...tarballs.map((name) => join(PACKS, name)), ...THIRD_PARTY],
    dir,
  );
  if (install.code !== 0)
    throw new Error(`npm install of the tarballs failed in the ${flavour} folder ${dir}:\n${install.output}`);
  console.info(`tarballs: installed in a ${flavour} folder in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

export default async function setup(project: TestProject): Promise<() => void> {
  const tarballs = existsSync(PACKS)
    ? readdirSync(PACKS)
        .filter((name) => name.endsWith('.tgz'))
        .sort()
    : [];
  if (tarballs.length === 0)
    throw new Error(`no tarballs in ${PACKS}: run \`npm run pack\` first (\`npm test\` packs before this step)`);
  const base = mkdtempSync(join(tmpdir(), 'kyb-tarballs-'));
  const dirs = { commonjs: join(base, 'commonjs'), module: join(base, 'module') };
  const teardown = () => {
    if (process.env.KYB_KEEP_TARBALL_DIRS) console.info(`tarballs: install folders kept in ${base}`);
    else rmSync(base, { recursive: true, force: true });
  };

  const ping = spawnSync('npm', ['ping'], { env: npmEnv(), encoding: 'utf8', timeout: 30_000 });
  if (ping.status !== 0) {
    const registry = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).stdout.trim();
    const why = `the npm registry (${registry}) does not answer \`npm ping\``;
    if (ci) throw new Error(`tarball tests: ${why}; under CI=true they must run:\n${ping.stdout}${ping.stderr}`);
    const skipped = `${why}: connect to it (or set npm's registry to a mirror) and rerun \`npm test\` to install the tarballs and run the quick starts there`;
    console.warn(`tarball tests SKIPPED: ${skipped}`);
    project.provide('tarballs', { skipped, dirs, tarballs });
    return teardown;
  }
  try {
    // Both folders at once: npm's cache is shared and safe for concurrent installs.
    await Promise.all(FLAVOURS.map((flavour) => prepare(dirs[flavour], flavour, tarballs)));
  } catch (error) {
    teardown();
    throw error;
  }
  project.provide('tarballs', { dirs, tarballs });
  return teardown;
}
