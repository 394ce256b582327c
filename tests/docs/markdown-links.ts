/**
 * The relative links of the repository's Markdown (README.md, docs/*.md, the packages' and examples' READMEs) and the
 * anchors their headings make, as GitHub renders them, so that the links test can check that every link points at a
 * file that exists and, when it names one, at a heading that exists. Text inside code (fenced blocks, `code spans`)
 * is neither a link nor a heading.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readmePaths, REPO_ROOT } from './readme-blocks.js';

/** One link as written: where it is, and its target split into path and anchor (both decoded). */
export interface MarkdownLink {
  /** The page's path from the repository root. */
  file: string;
  /** 1-based line of the link. */
  line: number;
  /** The target as written, e.g. `../../README.md#security-model`. */
  target: string;
  /** The path part, relative to the page's folder; empty for a link within the page. */
  path: string;
  /** The anchor without `#`, or undefined. */
  anchor: string | undefined;
}

/** Every Markdown page whose links are checked: the ones the code-block test reads, and the examples' READMEs. */
export function markdownPages(root: string = REPO_ROOT): string[] {
  const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join('examples', entry.name, 'README.md'))
    .filter((path) => existsSync(join(root, path)))
    .sort();
  return [...readmePaths(root), ...examples];
}

/** The page's lines with code blanked out: fenced blocks become empty lines, code spans become spaces. */
function proseLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  let fence: RegExp | undefined;
  return lines.map((line) => {
    if (fence) {
      if (fence.test(line)) fence = undefined;
      return '';
    }
    // A backtick fence's info string has no backtick (CommonMark), so "```` ```ts ```` …" is prose with code spans.
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !((open[1] as string)[0] === '`' && (open[2] as string).includes('`'))) {
      const marker = open[1] as string;
      fence = new RegExp(`^\\s*${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      return '';
    }
    // A code span is a run of backticks and the next run of the same length (CommonMark); its text is not Markdown.
    return line.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => ' '.repeat(span.length));
  });
}

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text in lower case, every character that is not a
 * letter, digit, mark, `_`, `-` or space dropped, spaces turned into `-`.
 */
export function slugOf(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '') // emphasis markers
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a page's headings make, repeated ones numbered `-1`, `-2`… as GitHub does; plus any `<a id>`/`name`. */
export function anchorsOf(file: string, root: string = REPO_ROOT): Set<string> {
  const text = readFileSync(join(root, file), 'utf8');
  // Headings are read from the page with only fenced blocks removed: a code span inside a heading is heading text.
  const lines = text.split(/\r?\n/);
  const fencedOut = proseLines(text);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  lines.forEach((line, index) => {
    if (fencedOut[index] === '' && line.trim() !== '') return; // inside (or opening) a fenced block
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slugOf(heading[1] as string);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  });
  return anchors;
}

/** Every relative link of a page (`[text](target)`, `![alt](src)`, `[label]: target`); URLs with a scheme are left out. */
export function relativeLinksOf(file: string, root: string = REPO_ROOT): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(readFileSync(join(root, file), 'utf8')).forEach((line, index) => {
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string),
      ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1] as string),
    ];
    for (const target of targets) {
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      links.push({ file, line: index + 1, target, path, anchor });
    }
  });
  return links;
}
