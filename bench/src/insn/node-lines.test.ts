import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultNodeLines, pinnedNodeBin, resolveNodeLines, type PinnedRuntimes } from './node-lines.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A stand-in for the pinned binaries: `node<line>` scripts in a new folder, and an installer that may write more. */
function standIns(installs: Record<string, string> = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'kyb-node-lines-'));
  folders.push(folder);
  const write = (line: string, script: string) => {
    writeFileSync(join(folder, `node${line}`), `#!/bin/sh\n${script}\n`);
    chmodSync(join(folder, `node${line}`), 0o755);
  };
  let installCalls = 0;
  const pinned: PinnedRuntimes = {
    binOf: (line) => join(folder, `node${line}`),
    install: () => {
      installCalls++;
      for (const [line, script] of Object.entries(installs)) write(line, script);
    },
  };
  return { pinned, write, installCalls: () => installCalls };
}

describe('the Node lines of the insn section', () => {
  it('measures on this Node and the active LTS line by default, and on this Node alone in a quick run', () => {
    expect(defaultNodeLines(false)).toEqual(['this', '26']);
    expect(defaultNodeLines(true)).toEqual(['this']);
  });

  it('resolves "this" to the Node running the bench, once however often it is named', () => {
    const { lines, missing } = resolveNodeLines(['this', 'this'], () => {});
    expect(lines).toEqual([{ name: 'this', bin: process.execPath, version: process.version }]);
    expect(missing).toEqual([]);
  });

  it.each(['22', '24', '26'] as const)(
    'looks for pinned Node %s where scripts/runtimes/install.mjs puts it',
    (line) => {
      // The path the runtimes step (scripts/runtimes/run.mjs) runs the suites with, so CI proves the binary is there.
      expect(pinnedNodeBin(line)).toMatch(new RegExp(`tests/runtimes/node_modules/node${line}/bin/node$`));
    },
  );

  it.runIf(process.platform !== 'win32')('takes a pinned line that starts, with the version it prints', () => {
    const { pinned, write, installCalls } = standIns();
    write('24', 'echo v24.21.0');
    const { lines, missing } = resolveNodeLines(['this', '24'], () => {}, pinned);
    expect(lines.map((l) => [l.name, l.version])).toEqual([
      ['this', process.version],
      ['24', 'v24.21.0'],
    ]);
    expect(lines[1]?.bin).toBe(pinned.binOf('24'));
    expect(missing).toEqual([]);
    expect(installCalls()).toBe(0);
  });

  it.runIf(process.platform !== 'win32')(
    'installs once when a pinned line is missing, then takes what it installed',
    () => {
      const { pinned, installCalls } = standIns({ '22': 'echo v22.23.3', '26': 'echo v26.12.1' });
      const progress: string[] = [];
      const { lines, missing } = resolveNodeLines(['22', '26'], (line) => progress.push(line), pinned);
      expect(lines.map((l) => l.version)).toEqual(['v22.23.3', 'v26.12.1']);
      expect(missing).toEqual([]);
      expect(installCalls()).toBe(1);
      expect(progress).toEqual(['Node 22 is not installed: node scripts/runtimes/install.mjs']);
    },
  );

  it.runIf(process.platform !== 'win32')(
    'reports a line that is still missing or does not start, with how to get it',
    () => {
      const { pinned, write, installCalls } = standIns();
      write('24', 'exit 3');
      const { lines, missing } = resolveNodeLines(['22', '24', '26'], () => {}, pinned);
      expect(lines).toEqual([]);
      expect(missing).toHaveLength(3);
      for (const [index, line] of (['22', '24', '26'] as const).entries()) {
        expect(missing[index]).toContain(`Node ${line}: ${pinned.binOf(line)} is missing or does not start`);
        expect(missing[index]).toContain('node scripts/runtimes/install.mjs');
      }
      // Two lines missing, one install: the installer puts every pinned runtime in place at once.
      expect(installCalls()).toBe(1);
    },
  );
});
