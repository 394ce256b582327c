/**
 * Bundles the callgrind program and its subjects (`program.ts`, `subject-*.ts`) into plain ES modules, so no
 * TypeScript loader runs inside a measured process. Every package stays external: a subject imports the built
 * packages from `node_modules` exactly as a user's code would, and what importing them costs is in the figures.
 * The output goes under `bench/node_modules/.cache/`, where Node resolves those packages from bench's dependencies.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { SUBJECTS } from './protocol.js';

const here = dirname(fileURLToPath(import.meta.url));
export const PROGRAM_DIR = join(here, '..', '..', 'node_modules', '.cache', 'kyb-insn');

/** Builds the program and every subject; resolves with the program's path. */
export async function buildProgram(): Promise<string> {
  mkdirSync(PROGRAM_DIR, { recursive: true });
  await build({
    entryPoints: ['program', ...SUBJECTS.map((name) => `subject-${name}`)].map((name) => join(here, `${name}.ts`)),
    outdir: PROGRAM_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  return join(PROGRAM_DIR, 'program.mjs');
}
