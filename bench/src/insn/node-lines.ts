/**
 * The Node lines the instruction counts are taken on. Node's JIT differs between lines (Node 22 and later have
 * Maglev, a mid-tier compiler Node 20 lacks, so the first deliveries of a process compile far less), and users run
 * the current LTS lines, not only the Node that runs the bench: `this` is that Node, `22`, `24` and `26` are the
 * binaries pinned in tests/runtimes/package.json, installed by scripts/runtimes/install.mjs when missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_LINES = ['this', '22', '24', '26'] as const;
export type NodeLineName = (typeof NODE_LINES)[number];

/** A Node binary to measure on. */
export interface NodeLine {
  name: NodeLineName;
  bin: string;
  /** `v26.12.1`. */
  version: string;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The lines measured when `--insn-node` is not given: this Node, and the active LTS line (all cases on each): Node 26
 * since October 2026.
 */
export function defaultNodeLines(quick: boolean): NodeLineName[] {
  return quick ? ['this'] : ['this', '26'];
}

/** Where a pinned line's binary is installed. */
export function pinnedNodeBin(name: Exclude<NodeLineName, 'this'>): string {
  return join(root, 'tests', 'runtimes', 'node_modules', `node${name}`, 'bin', 'node');
}

function versionOf(bin: string): string | undefined {
  const run = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** Where the pinned binaries are and how to install them: the real ones by default, stand-ins in the tests. */
export interface PinnedRuntimes {
  binOf: (name: Exclude<NodeLineName, 'this'>) => string;
  install: () => void;
}

const PINNED: PinnedRuntimes = {
  binOf: pinnedNodeBin,
  install: () => {
    spawnSync(process.execPath, [join(root, 'scripts', 'runtimes', 'install.mjs')], { stdio: 'ignore' });
  },
};

/**
 * Resolves the named lines to binaries, installing the pinned runtimes once if one is missing. A line that still
 * has no working binary comes back in `missing` with how to get it, and the section reports it skipped.
 *
 * @example
 * ```ts
 * const { lines, missing } = resolveNodeLines(['this', '26'], console.log)
 * // lines: [{ name: 'this', bin: process.execPath, version: 'v20.20.2' }, { name: '26', bin: '…/node26/bin/node', … }]
 * ```
 */
export function resolveNodeLines(
  names: readonly NodeLineName[],
  progress: (line: string) => void,
  pinned: PinnedRuntimes = PINNED,
): { lines: NodeLine[]; missing: string[] } {
  const lines: NodeLine[] = [];
  const missing: string[] = [];
  let installed = false;
  for (const name of [...new Set(names)]) {
    if (name === 'this') {
      lines.push({ name, bin: process.execPath, version: process.version });
      continue;
    }
    const bin = pinned.binOf(name);
    if (!existsSync(bin) && !installed) {
      progress(`Node ${name} is not installed: node scripts/runtimes/install.mjs`);
      pinned.install();
      installed = true;
    }
    const version = existsSync(bin) ? versionOf(bin) : undefined;
    if (version === undefined) {
      missing.push(
        `Node ${name}: ${bin} is missing or does not start (the pinned binaries are for linux-x64; ` +
          'run `node scripts/runtimes/install.mjs` and see its output)',
      );
    } else {
      lines.push({ name, bin, version });
    }
  }
  return { lines, missing };
}
