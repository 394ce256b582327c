/** The bench imports the built packages, so a missing or stale build would measure the wrong code. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES_DIR = fileURLToPath(new URL('../../packages/', import.meta.url));

function newestMtime(dir: string, filter: (name: string) => boolean): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && filter(entry.name))
      newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Problems found (empty when every named package has a dist at least as new as its sources). */
export function staleBuilds(packages: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of packages) {
    const dist = join(PACKAGES_DIR, name, 'dist');
    let built: number;
    try {
      built = statSync(join(dist, 'index.js')).mtimeMs;
    } catch {
      problems.push(`packages/${name} is not built`);
      continue;
    }
    const sources = newestMtime(
      join(PACKAGES_DIR, name, 'src'),
      (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
    );
    if (sources > built) problems.push(`packages/${name}/dist is older than its sources`);
  }
  return problems;
}
