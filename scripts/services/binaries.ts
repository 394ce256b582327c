import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { run } from './process.js';
import type { ServiceDefinition } from './service.js';

/** An executable named `name` in `dirs` or on PATH, or undefined. */
export function findBinary(name: string, dirs: readonly string[] = []): string | undefined {
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const dir of [...dirs, ...path, '/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin']) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/** PostgreSQL's Debian layout keeps one bin directory per major version; prefer 15, the version the tests target. */
export function postgresBinDirs(): string[] {
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  } catch {
    // no Debian-style install
  }
  const ordered = ['15', ...versions.filter((v) => v !== '15')];
  return ordered.map((v) => `/usr/lib/postgresql/${v}/bin`);
}

/** Whether this run may install missing servers: only as root, with apt-get, and not turned off. */
export function canInstall(): boolean {
  return (
    process.platform === 'linux' &&
    process.getuid?.() === 0 &&
    process.env.KYB_TEST_NO_INSTALL !== '1' &&
    findBinary('apt-get') !== undefined
  );
}

/**
 * Install Debian packages in ONE apt-get run (servers start in parallel, and two apt-get runs would fight over the
 * dpkg lock). The package index is refreshed only when the first attempt fails, because `apt-get update` is the slow
 * part. policy-rc.d/RUNLEVEL keep the packages' own init scripts from starting a system-wide server.
 */
export async function aptInstall(packages: readonly string[]): Promise<void> {
  if (packages.length === 0) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
  const install = ['install', '-y', '-q', '--no-install-recommends', ...packages];
  try {
    await run('apt-get', install, { env, label: 'apt-get install' });
  } catch {
    await run('apt-get', ['update', '-q'], { env, label: 'apt-get update' });
    await run('apt-get', install, { env, label: 'apt-get install' });
  }
}

/**
 * One apt-get run for every server of `definitions` whose binaries are missing and for the `extra` packages (Chromium
 * for the login browser test), only when allowed ({@link canInstall}). Used by the test run and by the bench. A
 * failed install is logged, not thrown: the start that follows names the missing binary (and fails a CI run).
 *
 * @example
 * ```ts
 * await installMissing([redis, mariadb], [], (line) => console.log(`[test services] ${line}`))
 * ```
 */
export async function installMissing(
  definitions: readonly ServiceDefinition[],
  extra: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  const missing = definitions.filter((d) => !d.locate().ok);
  const packages = [...missing.map((d) => d.aptPackage), ...extra];
  if (packages.length === 0 || !canInstall()) return;
  const begin = performance.now();
  log(`installing ${packages.join(' ')} with apt-get (only needed once)`);
  try {
    await aptInstall(packages);
    log(`installed in ${Math.round(performance.now() - begin)} ms`);
  } catch (error) {
    log(`apt-get failed: ${String((error as Error)?.message ?? error).split('\n')[0]!}`);
  }
}
