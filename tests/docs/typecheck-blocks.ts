/**
 * Typechecks written README blocks in one TypeScript program (one program is several times faster than one per
 * block: the packages' sources and the frameworks' types are loaded once) and maps every error back to its README
 * line.
 */
import ts from 'typescript';
import { BLOCK_COMPILER_OPTIONS, type WrittenBlock } from './block-workspace.js';
import { describeBlock, REPO_ROOT, type ReadmeBlock } from './readme-blocks.js';

/** Typecheck errors per block (empty when it compiles), keyed by the block, as `README.md:57: message` lines. */
export function typecheckBlocks(written: readonly WrittenBlock[]): Map<ReadmeBlock, string[]> {
  const owners = new Map<string, ReadmeBlock>();
  for (const entry of written) {
    owners.set(entry.file, entry.block);
    for (const [path, companion] of entry.companions) owners.set(path, companion);
  }
  const host = ts.createCompilerHost(BLOCK_COMPILER_OPTIONS);
  host.getCurrentDirectory = () => REPO_ROOT;
  const program = ts.createProgram({ rootNames: [...owners.keys()], options: BLOCK_COMPILER_OPTIONS, host });
  const errors = new Map<ReadmeBlock, string[]>();
  for (const entry of written) {
    errors.set(entry.block, []);
    for (const companion of entry.companions.values()) errors.set(companion, []);
  }
  const global = program.getGlobalDiagnostics().map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (global.length > 0) throw new Error(`The README blocks' compiler settings are broken: ${global.join('; ')}`);
  for (const [path, block] of owners) {
    const source = program.getSourceFile(path);
    if (!source) throw new Error(`${describeBlock(block)}: the compiler did not load ${path}`);
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    const list = errors.get(block) as string[];
    for (const diagnostic of diagnostics) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const message = `${block.readme}:${block.line + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      // A file= module is written beside several blocks; report each of its errors once.
      if (!list.includes(message)) list.push(message);
    }
  }
  return errors;
}
