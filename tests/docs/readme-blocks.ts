/**
 * The TypeScript code blocks of the READMEs and of docs/*.md, as the docs test checks them. A block's info string says
 * what it is:
 *
 * - ```` ```ts ```` — a complete module: typechecked.
 * - ```` ```ts quickstart ```` — a complete server: typechecked, then started as a process and sent a signed delivery
 *   (`path=/hooks/kyb` when it does not listen on `/webhooks/kyb`).
 * - ```` ```ts file=receiver.ts ```` — a module the README's other blocks import as `./receiver.js`: typechecked, and
 *   written beside every block of the same README (or of the same page of docs/).
 * - ```` ```ts fragment ```` — lines shown out of context: skipped, and counted as skipped. Keep these few.
 *
 * Other languages (`sh`, `json`, none) are not code to check.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository root, two levels above this folder. */
export const REPO_ROOT = join(import.meta.dirname, '..', '..');

export interface ReadmeBlock {
  /** The README's (or docs page's) path from the repository root, e.g. `packages/express/README.md`, `docs/ordering.md`. */
  readme: string;
  /** 1-based line of the block's first code line in the README. */
  line: number;
  /** The nearest heading above the block, for messages. */
  heading: string;
  kind: 'module' | 'quickstart' | 'file' | 'fragment';
  /** For `file=` blocks: the file name the other blocks import. */
  fileName?: string;
  /** For quickstarts: the path deliveries are POSTed to. */
  path: string;
  code: string;
}

const TS_LANGUAGES = new Set(['ts', 'typescript']);
const FLAGS = new Set(['quickstart', 'fragment']);
const ATTRIBUTES = new Set(['file', 'path']);

/**
 * The root README, the pages of docs/ (where the root README's reference moved) and every package's README, in a
 * stable order.
 */
export function readmePaths(root: string = REPO_ROOT): string[] {
  const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join('packages', entry.name, 'README.md'))
    .filter((path) => existsSync(join(root, path)))
    .sort();
  return ['README.md', ...docsPages(root), ...packages];
}

/** The Markdown pages of docs/ (`docs/architecture.md`, …), sorted; none when the folder does not exist. */
export function docsPages(root: string = REPO_ROOT): string[] {
  if (!existsSync(join(root, 'docs'))) return [];
  return readdirSync(join(root, 'docs'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => join('docs', entry.name))
    .sort();
}

/** Every TypeScript block of one README. Throws on an info string it does not understand, so a typo cannot skip a block. */
export function readmeBlocks(readme: string, root: string = REPO_ROOT): ReadmeBlock[] {
  const lines = readFileSync(join(root, readme), 'utf8').split(/\r?\n/);
  const blocks: ReadmeBlock[] = [];
  let heading = '(top)';
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const headingMatch = /^#{1,6}\s+(.*)$/.exec(line);
    if (headingMatch) heading = (headingMatch[1] as string).trim();
    const open = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(line);
    if (!open) continue;
    const indent = (open[1] as string).length;
    const fence = open[2] as string;
    const info = (open[3] as string).trim().split(/\s+/).filter(Boolean);
    const closing = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] as string)) end++;
    const body = lines
      .slice(index + 1, end)
      .map((text) => text.slice(Math.min(indent, text.length - text.trimStart().length)));
    const where = `${readme}:${index + 1}`;
    // The first code line, 1-based: the line after the opening fence.
    const firstLine = index + 2;
    index = end;
    const [language, ...rest] = info;
    if (language === undefined || !TS_LANGUAGES.has(language)) continue;
    const block: ReadmeBlock = {
      readme,
      line: firstLine,
      heading,
      kind: 'module',
      path: '/webhooks/kyb',
      code: body.join('\n') + '\n',
    };
    for (const word of rest) {
      const [name, value] = word.includes('=') ? (word.split('=', 2) as [string, string]) : [word, undefined];
      if (value === undefined && FLAGS.has(name)) {
        if (block.kind !== 'module')
          throw new Error(`${where}: a block is one of quickstart, fragment or file=…, not several.`);
        block.kind = name as 'quickstart' | 'fragment';
      } else if (value !== undefined && ATTRIBUTES.has(name)) {
        if (name === 'path') block.path = value;
        else {
          if (block.kind !== 'module')
            throw new Error(`${where}: a block is one of quickstart, fragment or file=…, not several.`);
          if (!/^[a-z][\w-]*\.ts$/.test(value))
            throw new Error(`${where}: file=${value} must be a plain file name ending in .ts, e.g. file=receiver.ts.`);
          block.kind = 'file';
          block.fileName = value;
        }
      } else {
        throw new Error(
          `${where}: unknown info string word "${word}" after \`\`\`${language}; use quickstart, fragment, file=<name>.ts or path=<url path>.`,
        );
      }
    }
    blocks.push(block);
  }
  return blocks;
}

/** A short name for a block in test titles and messages: `packages/express/README.md:42 (Quick start)`. */
export function describeBlock(block: ReadmeBlock): string {
  return `${block.readme}:${block.line} (${block.heading})`;
}

/** The blocks of every README. */
export function allReadmeBlocks(root: string = REPO_ROOT): ReadmeBlock[] {
  return readmePaths(root).flatMap((readme) => readmeBlocks(readme, root));
}

/** The README's own package folder (`packages/express`), or undefined for the root README and the pages of docs/. */
export function packageDirOf(readme: string): string | undefined {
  const dir = relative('.', join(readme, '..'));
  return dir === '' || dir === '.' || dir === 'docs' ? undefined : dir;
}
