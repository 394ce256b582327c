import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultNodeLines, pinnedNodeBin, resolveNodeLines } from './node-lines.js';

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

  it.each(['22', '24', '26'] as const)('finds pinned Node %s where scripts/runtimes/install.mjs puts it', (line) => {
    expect(pinnedNodeBin(line)).toMatch(new RegExp(`tests/runtimes/node_modules/node${line}/bin/node$`));
    // Only when the runtimes are installed: resolving would otherwise install them, which is not this test's job.
    if (!existsSync(pinnedNodeBin(line))) return;
    const { lines } = resolveNodeLines([line], () => {});
    expect(lines[0]?.version).toMatch(new RegExp(`^v${line}\\.`));
  });
});
