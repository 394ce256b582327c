/**
 * Runs a program under `valgrind --tool=callgrind` and reads the instructions it executed. Instruction counts do not
 * move with the load of a shared machine as wall-clock time does; node runs with `--single-threaded --predictable
 * --predictable-gc-schedule`, so two runs of the same program agree closely.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_NOW_MS } from '../clock.js';
import type { RunSpec } from './protocol.js';

export const NODE_FLAGS = ['--single-threaded', '--predictable', '--predictable-gc-schedule'];

function has(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes sure valgrind is there: installs Debian's package when it is missing and this is root on an apt system.
 * Resolves with why it cannot run otherwise.
 */
export function ensureValgrind(progress: (line: string) => void): string | undefined {
  if (has('valgrind')) return undefined;
  const root = process.getuid?.() === 0;
  if (root && has('apt-get')) {
    progress('valgrind is missing: apt-get install valgrind');
    const update = spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'valgrind'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (update.status === 0 && install.status === 0 && has('valgrind')) return undefined;
  }
  return root
    ? 'valgrind is missing and apt-get could not install it: install valgrind (Debian/Ubuntu: apt-get install valgrind)'
    : 'valgrind is missing: install it (Debian/Ubuntu: sudo apt-get install valgrind), or run the bench as root to let it install valgrind itself';
}

export interface CallgrindRun {
  instructions: number;
  /** The callgrind output file, kept when `keep` was asked (for `callgrind_annotate`); remove it when done. */
  outFile?: string;
}

/**
 * Runs `node <program> <spec>` under callgrind, with `nodeBin` (this Node by default); fails with the program's
 * stderr when it fails.
 */
export function callgrind(program: string, spec: RunSpec, keep = false, nodeBin = process.execPath): CallgrindRun {
  const dir = mkdtempSync(join(tmpdir(), 'kyb-insn-'));
  const outFile = join(dir, 'callgrind.out');
  const run = spawnSync(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${outFile}`, nodeBin, ...NODE_FLAGS, program, JSON.stringify(spec)],
    {
      encoding: 'utf8',
      env: { ...process.env, KYB_BENCH_NOW_MS: String(BENCH_NOW_MS) },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  // Kept only for a run that succeeded: the caller removes a kept file, and never sees one of a run that failed.
  let handedOver = false;
  try {
    if (run.status !== 0) {
      // No stderr when valgrind could not start at all (spawnSync's error says why).
      const why = run.stderr?.slice(-2000) ?? run.error?.message;
      throw new Error(`callgrind run ${JSON.stringify(spec)} failed (${run.status}): ${why}`);
    }
    const summary = /^summary:\s+(\d+)/m.exec(readFileSync(outFile, 'utf8'));
    if (!summary) throw new Error(`no summary line in ${outFile}`);
    handedOver = keep;
    return keep ? { instructions: Number(summary[1]), outFile } : { instructions: Number(summary[1]) };
  } finally {
    if (!handedOver) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Instructions executed by each function (`callgrind_annotate`), by `file:function`: by the function itself, or with
 * `inclusive`, by the function and everything it called.
 */
export function annotate(outFile: string, { inclusive = false } = {}): Map<string, number> {
  const run = spawnSync('callgrind_annotate', [`--inclusive=${inclusive ? 'yes' : 'no'}`, '--threshold=100', outFile], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`callgrind_annotate failed: ${run.stderr}`);
  const items = new Map<string, number>();
  for (const line of run.stdout.split('\n')) {
    const match = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$/.exec(line);
    if (!match || line.includes('PROGRAM TOTALS')) continue;
    const name = match[2]!.replace(/\s+\[[^\]]*\]$/, '');
    items.set(name, (items.get(name) ?? 0) + Number(match[1]!.replaceAll(',', '')));
  }
  return items;
}

/**
 * Where the instructions of each extra delivery go: the difference between the profiles of a longer and a shorter
 * run, per delivery, largest first (`[instructions per delivery, name]`). Start-up and the fixture cancel out. JIT
 * compiled JavaScript has no symbols: it shows as `???` items.
 */
export function topPerDelivery(
  longer: Map<string, number>,
  shorter: Map<string, number>,
  deliveries: number,
  count: number,
): [number, string][] {
  return [...longer]
    .map(([name, instructions]): [number, string] => [(instructions - (shorter.get(name) ?? 0)) / deliveries, name])
    .sort((a, b) => b[0] - a[0])
    .slice(0, count);
}
