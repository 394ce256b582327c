/**
 * The CPU time of this run's whole process tree (the bench process and everything it started: the PostgreSQL and
 * Redis servers, their backends, the worker and server processes), read from Linux's /proc, so a figure can tell
 * this run's share of a busy machine from other work's. Elsewhere, or when /proc cannot be read, NaN.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** user + system CPU of `root` and all its descendants, their reaped children included, in µs. */
export function treeCpuMicros(root: number = process.pid): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return Number.NaN;
  }
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(name);
    parent.set(pid, Number(fields[1]));
    // utime, stime, cutime, cstime: fields 14 to 17 of proc(5), 11 to 14 here.
    ticks.set(pid, Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
  }
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid, depth = 0; at !== undefined && at > 0 && depth < 64; depth++) {
      if (at === root) return true;
      at = parent.get(at);
    }
    return false;
  };
  let total = 0;
  for (const [pid, value] of ticks) if (inTree(pid)) total += value;
  return (total * 1_000_000) / clockTicks();
}
