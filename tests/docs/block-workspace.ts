/**
 * Writes README blocks to disk where their imports resolve as a user's would: inside a workspace package whose
 * dependencies include every package the block imports (the README's own package first, so it can import itself by
 * name, then the examples, the tests and the other packages). The folder is `<package>/.tmp/readme-blocks/<run>/`:
 * inside the package (not its node_modules, where Node finds no package scope), ignored by git (`.tmp/`), and removed
 * afterwards.
 */
import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describeBlock, REPO_ROOT, type ReadmeBlock } from './readme-blocks.js';

const BLOCKS_DIR = join('.tmp', 'readme-blocks');

/** How the blocks are compiled: the repository's settings, every block a module, sources through the source condition. */
export const BLOCK_COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  moduleDetection: ts.ModuleDetectionKind.Force,
  customConditions: ['@kyb-webhooks/source'],
  strict: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  esModuleInterop: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  noEmit: true,
  types: ['node'],
  typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
};

/** One block written to disk, with the README modules it imports beside it. */
export interface WrittenBlock {
  block: ReadmeBlock;
  /** Absolute path of the block's file. */
  file: string;
  /** The workspace package its imports resolve from, relative to the repository root. */
  packageDir: string;
  /** The `file=` blocks written beside it, by absolute path. */
  companions: Map<string, ReadmeBlock>;
}

/** Workspace folders tried for a block's imports, after the README's own package. */
function candidateDirs(root: string): string[] {
  const children = (parent: string) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name))
      .sort();
  return [...children('examples'), 'tests', ...children('packages')];
}

/** The bare module names a block imports (relative imports are README modules; `node:` ones resolve anywhere). */
function importedPackages(code: string): string[] {
  return ts
    .preProcessFile(code, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((name) => !name.startsWith('.') && !name.startsWith('node:'));
}

function resolvesFrom(dir: string, specifiers: readonly string[]): boolean {
  const containing = join(dir, BLOCKS_DIR, 'probe.ts');
  return specifiers.every(
    (specifier) =>
      ts.resolveModuleName(specifier, containing, BLOCK_COMPILER_OPTIONS, ts.sys).resolvedModule !== undefined,
  );
}

/**
 * Chooses where each checked block lives and writes it, with its README's `file=` modules, under `run`. Throws when
 * a block's imports resolve from no workspace package, naming the block and the imports.
 */
export function writeBlocks(blocks: readonly ReadmeBlock[], run: string, root: string = REPO_ROOT): WrittenBlock[] {
  const candidates = candidateDirs(root);
  const written: WrittenBlock[] = [];
  const companionsOf = (readme: string) => blocks.filter((b) => b.readme === readme && b.kind === 'file');
  const toWrite = blocks.filter((b) => b.kind === 'module' || b.kind === 'quickstart');
  // A README whose only checked code is file= modules still gets them typechecked, on their own.
  for (const readme of new Set(blocks.filter((b) => b.kind === 'file').map((b) => b.readme))) {
    if (!toWrite.some((b) => b.readme === readme)) toWrite.push(...companionsOf(readme).slice(0, 1));
  }
  for (const block of toWrite) {
    const companions = companionsOf(block.readme).filter((c) => c !== block);
    const needed = [...new Set([block, ...companions].flatMap((b) => importedPackages(b.code)))];
    // A package's README tries its own package first; the root README and the pages of docs/ belong to none.
    const own = dirname(block.readme);
    const dirs = candidates.includes(own) ? [own, ...candidates.filter((d) => d !== own)] : candidates;
    const packageDir = dirs.find((dir) => resolvesFrom(join(root, dir), needed));
    if (packageDir === undefined) {
      throw new Error(
        `${describeBlock(block)}: no workspace package can resolve all of ${needed.join(', ')}; add the missing dependency to the README's package (or the examples).`,
      );
    }
    const folder = join(root, packageDir, BLOCKS_DIR, run, `${block.readme.replace(/[^\w]+/g, '-')}-L${block.line}`);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, block.kind === 'file' ? (block.fileName as string) : 'block.ts');
    writeFileSync(file, block.code);
    const companionFiles = new Map<string, ReadmeBlock>();
    for (const companion of companions) {
      const path = join(folder, companion.fileName as string);
      writeFileSync(path, companion.code);
      companionFiles.set(path, companion);
    }
    written.push({ block, file, packageDir, companions: companionFiles });
  }
  return written;
}

/**
 * Removes the folders of earlier runs whose process is gone (a run killed before its cleanup), so they never pile up.
 * Run names start with `run-<pid>-`.
 */
export function removeStaleRuns(root: string = REPO_ROOT): void {
  for (const dir of candidateDirs(root)) {
    let runs: string[];
    try {
      runs = readdirSync(join(root, dir, BLOCKS_DIR));
    } catch {
      continue;
    }
    for (const name of runs) {
      const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(pid) && !isAlive(pid))
        rmSync(join(root, dir, BLOCKS_DIR, name), { recursive: true, force: true });
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes what {@link writeBlocks} wrote under `run`, in every workspace package. */
export function removeBlocks(run: string, root: string = REPO_ROOT): void {
  for (const dir of candidateDirs(root)) {
    rmSync(join(root, dir, BLOCKS_DIR, run), { recursive: true, force: true });
    // Leave no empty folders behind either (another run may still be using them: rmdir fails then, which is fine).
    for (const empty of [join(root, dir, BLOCKS_DIR), join(root, dir, '.tmp')]) {
      try {
        rmdirSync(empty);
      } catch {}
    }
  }
}
