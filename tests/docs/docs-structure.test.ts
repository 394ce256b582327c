/**
 * What keeps the docs navigable: the root README stays a guide (a table of contents that reaches every section, about
 * 25 KB), the pipeline has ONE step numbering (the code's `// N. step` comments, docs/architecture.md §3 and the
 * README's list agree), every `docs/architecture.md §N` a source file cites is a section that exists, and every file
 * §13 names exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, slugOf } from './markdown-links.js';
import { REPO_ROOT } from './readme-blocks.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

/** The TypeScript sources under `dir` (tests included when asked), recursively, as paths from the repository root. */
function sources(dir: string, withTests = false): string[] {
  const found: string[] = [];
  const walk = (absolute: string) => {
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = join(absolute, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && (withTests || !entry.name.endsWith('.test.ts')))
        found.push(relative(REPO_ROOT, path));
    }
  };
  walk(join(REPO_ROOT, dir));
  return found.sort();
}

describe('the root README is a guide', () => {
  const readme = read('README.md');

  it('is at most about 25 KB: the reference lives in docs/ and the package READMEs', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(26_000);
  });

  it('has a table of contents that links every other section', () => {
    const contents = /^## Contents\n([\s\S]*?)\n## /m.exec(readme)?.[1];
    expect(contents, 'a "## Contents" section').toBeDefined();
    const linked = new Set([...(contents as string).matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]));
    const sections = [...readme.matchAll(/^## (.+)$/gm)]
      .map((m) => slugOf(m[1] as string))
      .filter((slug) => slug !== 'contents');
    expect(sections.filter((slug) => !linked.has(slug))).toEqual([]);
  });
});

describe('the pipeline has one step numbering', () => {
  const STEP_NAMES = ['limits', 'signature', 'parse', 'envelope', 'attestation', 'dedupe', 'dispatch', 'settle'];

  // The code numbers its steps in comments such as `// 6. dedupe: claim the event` (checks.ts, claim-run-settle.ts
  // today; wherever they move). Other numbered comments (the attestation's own sub-steps) name no pipeline step.
  const inCode = new Map<number, Set<string>>();
  for (const file of sources('packages/core/src')) {
    for (const match of read(file).matchAll(/^\s*\/\/ ([1-8])\. ([a-z]+)/gm)) {
      const [number, name] = [Number(match[1]), match[2] as string];
      if (!STEP_NAMES.includes(name)) continue;
      if (!inCode.has(number)) inCode.set(number, new Set());
      inCode.get(number)!.add(name);
    }
  }
  const codeSteps = [...inCode.entries()]
    .sort(([a], [b]) => a - b)
    .map(([number, names]) => [number, [...names].join(' | ')] as const);

  it('in the code: eight steps, one name each', () => {
    expect(codeSteps).toEqual(STEP_NAMES.map((name, index) => [index + 1, name]));
  });

  it('in docs/architecture.md §3: the same steps, numbers and order', () => {
    const architecture = read('docs/architecture.md');
    const section = /^## 3\. [^\n]*\n([\s\S]*?)\n## 4\. /m.exec(architecture)?.[1] ?? '';
    const rows = [...section.matchAll(/^\| ([1-8]) \| ([a-z]+) \|/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(rows).toEqual(codeSteps);
  });

  it("in the README's list: the same steps, numbers and order", () => {
    const whatItIs = /^## What it is\n([\s\S]*?)\n## /m.exec(read('README.md'))?.[1] ?? '';
    const items = [...whatItIs.matchAll(/^([1-8])\. \*\*([a-z]+)/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(items).toEqual(codeSteps);
  });
});

describe('citations of docs/architecture.md', () => {
  const anchors = anchorsOf('docs/architecture.md');
  /** `§3`, `§7.2`: the sections the page numbers, from its headings (`## 3. …`, `### 7.2 …`). */
  const numbered = new Set(
    [...read('docs/architecture.md').matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1] as string),
  );

  it('numbers its sections', () => {
    expect(numbered.has('3')).toBe(true);
    expect(anchors.has('3-the-pipeline-in-eight-steps')).toBe(true);
  });

  it('every "docs/architecture.md §N" in the sources names a section that exists', () => {
    const files = ['packages', 'tests', 'scripts', 'examples'].flatMap((dir) => sources(dir, true));
    const missing: string[] = [];
    for (const file of files) {
      const text = read(file);
      for (const match of text.matchAll(/architecture\.md((?:,? (?:and )?§\d+(?:\.\d+)?)+)/g)) {
        for (const cited of (match[1] as string).matchAll(/§(\d+(?:\.\d+)?)/g)) {
          if (!numbered.has(cited[1] as string)) missing.push(`${file}: §${cited[1]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('docs/architecture.md §13, where things live', () => {
  const section = /^## 13\. [^\n]*\n([\s\S]*?)\n## 14\. /m.exec(read('docs/architecture.md'))?.[1] ?? '';
  /** `{a,b}` → both; a path names a file or a folder (`…/`). */
  const expand = (path: string): string[] => {
    const brace = /\{([^}]*)\}/.exec(path);
    return brace ? brace[1]!.split(',').flatMap((part) => expand(path.replace(brace[0], part))) : [path];
  };
  const exists = (path: string) => {
    try {
      readdirSync(join(REPO_ROOT, path.endsWith('/') ? path : join(path, '..')));
      return path.endsWith('/') || readdirSync(join(REPO_ROOT, path, '..')).includes(path.split('/').pop()!);
    } catch {
      return false;
    }
  };

  it('names only files and folders that exist', () => {
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| concept'));
    expect(rows.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const row of rows) {
      const files = row.split(' | ').slice(1).join(' | ');
      // A name is read under packages/core/src/, from the repository root, or under a folder named before it in the
      // same row (`packages/client/src/client.ts`, `paging.ts`).
      const bases = ['packages/core/src/', ''];
      for (const [, name] of files.matchAll(/`([\w./{},-]+(?:\.ts|\/))`/g)) {
        const found = expand(name!).every((path) => bases.some((base) => exists(base + path)));
        if (!found) missing.push(name!);
        const folder = name!.endsWith('/') ? name! : name!.replace(/[^/]*$/, '');
        for (const base of [...bases]) if (folder && exists(base + folder)) bases.push(base + folder);
        if (name!.startsWith('packages/')) bases.push(folder.replace(/[^/]+\/$/, ''));
      }
    }
    expect(missing).toEqual([]);
  });
});
