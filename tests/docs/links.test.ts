/**
 * The docs navigate: every relative link of README.md, docs/*.md and the packages' and examples' READMEs points at a
 * file or folder of the repository that exists, and a link with an anchor (`docs/ordering.md#unfillable-stalls`)
 * at a heading of that page. The reference moved out of the root README into docs/ and the package READMEs; a link
 * left pointing at a heading that moved fails here, with the page and line.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, markdownPages, relativeLinksOf, slugOf } from './markdown-links.js';
import { REPO_ROOT } from './readme-blocks.js';

const pages = markdownPages();

describe('Markdown links', () => {
  it('makes anchors as GitHub does', () => {
    expect(slugOf('Options of `createReceiver`')).toBe('options-of-createreceiver');
    expect(slugOf('Fetch-style servers: Next.js route handlers, Bun, Deno, Cloudflare Workers')).toBe(
      'fetch-style-servers-nextjs-route-handlers-bun-deno-cloudflare-workers',
    );
    expect(slugOf('3. The pipeline, in eight steps')).toBe('3-the-pipeline-in-eight-steps');
    expect(slugOf('Quick start (Express)')).toBe('quick-start-express');
  });

  it('covers the root README, docs/ and the package READMEs', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain(join('docs', 'architecture.md'));
    expect(pages).toContain(join('packages', 'core', 'README.md'));
  });

  it.each(pages)('every relative link of %s resolves to a file, and its anchor to a heading', (page) => {
    const broken: string[] = [];
    for (const link of relativeLinksOf(page)) {
      const target = link.path === '' ? page : normalize(join(dirname(page), link.path));
      const where = `${page}:${link.line}: (${link.target})`;
      if (relative(REPO_ROOT, join(REPO_ROOT, target)).startsWith('..')) {
        broken.push(`${where} points outside the repository`);
        continue;
      }
      if (!existsSync(join(REPO_ROOT, target))) {
        broken.push(`${where} ${target} does not exist`);
        continue;
      }
      if (
        link.anchor === undefined ||
        link.anchor === '' ||
        !target.endsWith('.md') ||
        statSync(join(REPO_ROOT, target)).isDirectory()
      )
        continue;
      if (!anchorsOf(target).has(link.anchor))
        broken.push(`${where} ${target} has no heading with the anchor #${link.anchor}`);
    }
    expect(broken).toEqual([]);
  });
});
