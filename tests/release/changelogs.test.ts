/**
 * What a release's `changeset version` does with this repository's `.changeset/` (docs/releasing.md), run in a
 * temporary copy of the workspace's manifests (and changelogs) so the changesets of the clone stay unconsumed until a
 * real release, with one more changeset naming every package so the check holds right after a release too:
 * every package under packages/ gets a CHANGELOG.md listing the changesets that name it, its version is raised by the
 * largest bump they ask for, every changeset is consumed, and the packages' ranges on each other stay `workspace:`
 * ranges (which `pnpm pack` and `pnpm publish` replace with the new versions).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../docs/readme-blocks.js';

type Bump = 'major' | 'minor' | 'patch';
interface Changeset {
  file: string;
  releases: Map<string, Bump>;
  /** The summary's first line, as the CHANGELOG shows it. */
  headline: string;
}
interface Manifest {
  name: string;
  version?: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const CHANGESETS = join(REPO_ROOT, '.changeset');
const changesetCli = join(REPO_ROOT, 'node_modules', '@changesets', 'cli', 'bin.js');

/** The workspace's package folders, from pnpm-workspace.yaml's `packages:` globs (`dir/*` or a plain folder). */
function workspaceDirs(): string[] {
  const yaml = readFileSync(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [...(/^packages:\n((?:\s+- .*\n)+)/m.exec(yaml)?.[1] ?? '').matchAll(/- ['"]?([^'"\n]+)['"]?/g)].map(
    (m) => (m[1] as string).trim(),
  );
  return globs
    .flatMap((glob) =>
      glob.endsWith('/*')
        ? readdirSync(join(REPO_ROOT, glob.slice(0, -2)), { withFileTypes: true })
            .filter((entry) => entry.isDirectory())
            .map((entry) => join(glob.slice(0, -2), entry.name))
        : [glob],
    )
    .filter((dir) => existsSync(join(REPO_ROOT, dir, 'package.json')))
    .sort();
}

function readChangesets(): Changeset[] {
  return readdirSync(CHANGESETS)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort()
    .map((file) => {
      const text = readFileSync(join(CHANGESETS, file), 'utf8');
      const [, front = '', body = ''] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text) ?? [];
      const releases = new Map<string, Bump>();
      for (const line of front.split('\n').filter((l) => l.trim())) {
        const match = /^\s*["']?([^"':\s]+)["']?\s*:\s*(major|minor|patch)\s*$/.exec(line);
        if (!match) throw new Error(`.changeset/${file}: cannot read the release line "${line}"`);
        releases.set(match[1] as string, match[2] as Bump);
      }
      return { file, releases, headline: body.trim().split('\n')[0] as string };
    });
}

function bumped(version: string, bump: Bump): string {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

const RANK: Record<Bump, number> = { patch: 0, minor: 1, major: 2 };
const internalRanges = (manifest: Manifest) =>
  Object.fromEntries(
    (['dependencies', 'devDependencies', 'peerDependencies'] as const).flatMap((field) =>
      Object.entries(manifest[field] ?? {})
        .filter(([name]) => name.startsWith('@kyb-webhooks/'))
        .map(([name, range]) => [`${field} ${name}`, range]),
    ),
  );

const dirs = workspaceDirs();
const changesets = readChangesets();
const before = new Map(
  dirs.map((dir) => [dir, JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Manifest]),
);
const publishable = dirs.filter((dir) => dir.startsWith('packages/') && before.get(dir)?.private !== true);
/** The changeset the test adds for every package. */
const EVERY_PACKAGE = { file: 'zz-tests-release-every-package.md', headline: 'A release line for every package.' };
const copy = mkdtempSync(join(tmpdir(), 'kyb-changeset-version-'));
let run: ReturnType<typeof spawnSync>;
const after = (dir: string) => JSON.parse(readFileSync(join(copy, dir, 'package.json'), 'utf8')) as Manifest;

beforeAll(() => {
  for (const file of ['package.json', 'pnpm-workspace.yaml']) cpSync(join(REPO_ROOT, file), join(copy, file));
  cpSync(CHANGESETS, join(copy, '.changeset'), { recursive: true });
  for (const dir of dirs) {
    mkdirSync(join(copy, dir), { recursive: true });
    for (const file of ['package.json', 'CHANGELOG.md'])
      if (existsSync(join(REPO_ROOT, dir, file))) cpSync(join(REPO_ROOT, dir, file), join(copy, dir, file));
  }
  // One more changeset, naming every package, so that each gets a changelog entry even right after a release, when
  // .changeset/ holds none: the config is checked whatever is pending.
  const lines = publishable.map((dir) => `'${(before.get(dir) as Manifest).name}': patch`);
  writeFileSync(
    join(copy, '.changeset', EVERY_PACKAGE.file),
    `---\n${lines.join('\n')}\n---\n\n${EVERY_PACKAGE.headline}\n`,
  );
  // The config's changelog module (@changesets/cli/changelog) resolves from here, as in the clone.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  run = spawnSync(process.execPath, [changesetCli, 'version'], { cwd: copy, encoding: 'utf8', timeout: 90_000 });
}, 120_000);

afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('changeset version, as a release runs it (in a temporary copy)', () => {
  it('reads the pending changesets (none right after a release), each naming packages of this workspace', () => {
    const names = new Set([...before.values()].map((manifest) => manifest.name));
    const unknown = changesets.flatMap((c) => [...c.releases.keys()].filter((name) => !names.has(name)));
    expect(unknown).toEqual([]);
  });

  it('succeeds and consumes every changeset', () => {
    expect(run.status, `${String(run.stdout)}\n${String(run.stderr)}`).toBe(0);
    expect(readdirSync(join(copy, '.changeset')).sort()).toEqual(['README.md', 'config.json']);
  });

  it.each(publishable)(
    '%s gets a CHANGELOG.md with its new version and the headline of each of its changesets',
    (dir) => {
      const { name, version } = before.get(dir) as Manifest;
      const own = changesets.filter((c) => c.releases.has(name));
      const changelog = join(copy, dir, 'CHANGELOG.md');
      expect(existsSync(changelog), `${dir}/CHANGELOG.md`).toBe(true);
      const text = readFileSync(changelog, 'utf8');
      expect(text.startsWith(`# ${name}\n`)).toBe(true);
      expect(text).toContain(`\n## ${after(dir).version}\n`);
      expect([...own, EVERY_PACKAGE].filter((c) => !text.includes(c.headline)).map((c) => c.file)).toEqual([]);
      // The largest bump its changesets ask for; a patch at least, the one the test's own changeset asks for.
      const largest = own
        .map((c) => c.releases.get(name) as Bump)
        .reduce((a, b) => (RANK[b] > RANK[a] ? b : a), 'patch' as Bump);
      expect(after(dir).version).toBe(bumped(version as string, largest));
    },
  );

  it('keeps every range of a package on another as a workspace: range', () => {
    const changed = dirs.flatMap((dir) => {
      const was = internalRanges(before.get(dir) as Manifest);
      const now = internalRanges(after(dir));
      return Object.keys({ ...was, ...now })
        .filter((key) => was[key] !== now[key] || !String(now[key]).startsWith('workspace:'))
        .map((key) => `${dir} ${key}: ${was[key]} → ${now[key]}`);
    });
    expect(changed).toEqual([]);
  });

  it('leaves the examples, the benchmarks and the test packages unversioned', () => {
    const versioned = dirs
      .filter((dir) => !dir.startsWith('packages/'))
      .filter((dir) => after(dir).version !== before.get(dir)?.version || existsSync(join(copy, dir, 'CHANGELOG.md')));
    expect(versioned).toEqual([]);
  });
});
