import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { callgrind } from './callgrind.js';

const runFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('kyb-insn-'));

describe('a callgrind run', () => {
  // A node that exits 1 at once (or no valgrind at all): either way the run fails before any summary.
  it.each([false, true])('that fails leaves no folder behind, kept or not (keep: %s)', (keep) => {
    const before = runFolders();
    const spec = { subject: 'none', kind: 'hmac', fixture: '/nonexistent', count: 0, importOnly: false } as const;
    expect(() => callgrind('/nonexistent/program.mjs', spec, keep, '/bin/false')).toThrow(/callgrind run .* failed/);
    expect(runFolders().filter((name) => !before.includes(name))).toEqual([]);
  });
});
