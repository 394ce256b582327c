#!/usr/bin/env node
// Installs the runtimes pinned in tests/runtimes/package.json (Node 22, 24 and 26, Bun, Deno, workerd) with plain npm,
// from that folder's lockfile; a no-op when they are installed and the lockfile has not changed since. Used by ./run.mjs
// and by the bench's instruction-count section, which measures on the pinned Node lines too:
//   node scripts/runtimes/install.mjs    exits 1 when the install failed
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const runtimesProject = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'runtimes');

/** Installs the pinned runtimes unless they are current; returns whether they are there. */
export function installPinnedRuntimes() {
  const lock = join(runtimesProject, 'package-lock.json');
  const marker = join(runtimesProject, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return true;
  console.log('› installing the pinned runtimes (npm install in tests/runtimes, from its lockfile)');
  // Not `npm ci`: it insists that every platform's optional binary package can be fetched, and a registry mirror may
  // hold only those of the platforms it serves. --no-save leaves the lockfile as committed.
  const result = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund'], {
    cwd: runtimesProject,
    stdio: 'inherit',
  });
  return result.status === 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exit(installPinnedRuntimes() ? 0 : 1);
}
