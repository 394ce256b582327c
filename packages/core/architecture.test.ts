/**
 * The shape of the core, checked from its imports (parsed with the TypeScript compiler API) and its source text, so that
 * a newcomer keeps finding their way (issue 27):
 * - no import cycle among the core's sources (type-only imports and re-exports included);
 * - at most a dozen files at the top of src/: the entry points and the receiver; everything else in a concept folder;
 * - no source file over 450 lines and no function over 120 lines (a factory's inner functions count towards it);
 * - no other package imports the core's sources by relative path: they import its entry points;
 * - the root, ./store and ./adapter entries load no zod when imported (issue 28): only ./schemas and the lazy
 *   validation's dynamic import reach it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const CORE = dirname(fileURLToPath(import.meta.url));
const SRC = join(CORE, 'src');
const PACKAGES = dirname(CORE);
const MAX_TOP_LEVEL_FILES = 12;
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 120;

const posix = (path: string): string => path.split(sep).join('/');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The core's source files (not tests), by path relative to src/. */
const sources = walk(SRC)
  .filter((file) => !file.endsWith('.test.ts'))
  .map((file) => posix(relative(SRC, file)))
  .sort();
const text = new Map(sources.map((file) => [file, readFileSync(join(SRC, file), 'utf8')]));

/** Every relative module a source file imports or re-exports (static or dynamic), as a path relative to src/. */
function importsOf(file: string): string[] {
  const found = ts.preProcessFile(text.get(file)!, true, true).importedFiles.map((imported) => imported.fileName);
  return found
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => posix(relative(SRC, resolve(SRC, dirname(file), specifier))).replace(/\.js$/, '.ts'));
}

/** The import cycles of a graph (its strongly connected components of more than one file, or a file importing itself). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const imported of graph.get(file) ?? []) {
      if (!graph.has(imported)) continue;
      if (!index.has(imported)) {
        visit(imported);
        low.set(file, Math.min(low.get(file)!, low.get(imported)!));
      } else if (onStack.has(imported)) {
        low.set(file, Math.min(low.get(file)!, index.get(imported)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** Every function of a file (declarations, methods, arrows, function expressions) with its length in lines. */
function functionsOf(file: string): { name: string; line: number; lines: number }[] {
  const source = ts.createSourceFile(file, text.get(file)!, ts.ScriptTarget.Latest, true);
  const found: { name: string; line: number; lines: number }[] = [];
  const lineOf = (position: number): number => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const parent = node.parent;
      const name =
        (node.name && ts.isIdentifier(node.name) ? node.name.text : undefined) ??
        (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)
          ? parent.name.getText(source)
          : '(anonymous)');
      const line = lineOf(node.getStart(source));
      found.push({ name, line, lines: lineOf(node.end) - line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * What a file loads at run time when it is imported: its static imports and re-exports that are not type-only, as
 * module specifiers (relative ones resolved to src/). Dynamic `import()` is left out: it loads nothing until called.
 */
function runtimeImportsOf(file: string): string[] {
  const source = ts.createSourceFile(file, text.get(file)!, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (!typeOnly) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      specifier = statement.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier)) {
      const name = specifier.text;
      found.push(
        name.startsWith('.') ? posix(relative(SRC, resolve(SRC, dirname(file), name))).replace(/\.js$/, '.ts') : name,
      );
    }
  }
  return found;
}

/** The packages (bare specifiers) loaded when `entry` is imported, following relative static imports through src/. */
function packagesLoadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of runtimeImportsOf(file)) {
      if (imported.startsWith('#') || !text.has(imported)) packages.add(imported);
      else visit(imported);
    }
  };
  visit(entry);
  return packages;
}

const lineCount = (file: string): number => text.get(file)!.replace(/\n$/, '').split('\n').length;

describe('the core’s shape', () => {
  it('has no import cycle', () => {
    const graph = new Map(sources.map((file) => [file, importsOf(file)]));
    expect(cyclesOf(graph).map((cycle) => cycle.join(' ⇄ '))).toEqual([]);
  });

  it.each(['index.ts', 'store.ts', 'adapter.ts', 'queue.ts'])(
    'loads no zod when %s is imported (only ./schemas does)',
    (entry) => {
      const loaded = [...packagesLoadedBy(entry)];
      expect(loaded.filter((name) => name === 'zod' || name.startsWith('zod/'))).toEqual([]);
      // The check sees the imports it must: jose is loaded by the root, and ./schemas loads zod.
      if (entry === 'index.ts') expect(loaded).toContain('jose/jwks/local');
      expect([...packagesLoadedBy('schemas.ts')]).toContain('zod/mini');
    },
  );

  it(`keeps at most ${MAX_TOP_LEVEL_FILES} files at the top of src/`, () => {
    const topLevel = sources.filter((file) => !file.includes('/'));
    expect(topLevel.length, `top of src/: ${topLevel.join(', ')}`).toBeLessThanOrEqual(MAX_TOP_LEVEL_FILES);
  });

  it(`keeps every source file within ${MAX_FILE_LINES} lines`, () => {
    const long = sources.filter((file) => lineCount(file) > MAX_FILE_LINES);
    expect(long.map((file) => `${file}: ${lineCount(file)} lines`)).toEqual([]);
  });

  it(`keeps every function within ${MAX_FUNCTION_LINES} lines`, () => {
    const long = sources
      .flatMap((file) => functionsOf(file).map((fn) => ({ file, ...fn })))
      .filter((fn) => fn.lines > MAX_FUNCTION_LINES);
    expect(long.map((fn) => `${fn.file}:${fn.line} ${fn.name}: ${fn.lines} lines`)).toEqual([]);
  });

  it('is imported by the other packages through its entry points, never by a relative path into its sources', () => {
    const reaching: string[] = [];
    for (const name of readdirSync(PACKAGES)) {
      if (name === 'core') continue;
      let files: string[];
      try {
        files = walk(join(PACKAGES, name, 'src'));
      } catch {
        continue;
      }
      for (const file of files) {
        const imported = ts
          .preProcessFile(readFileSync(file, 'utf8'), true, true)
          .importedFiles.map((entry) => entry.fileName);
        for (const specifier of imported) {
          if (specifier.startsWith('.') && resolve(dirname(file), specifier).startsWith(CORE + sep)) {
            reaching.push(`${posix(relative(PACKAGES, file))}: ${specifier}`);
          }
        }
      }
    }
    expect(reaching).toEqual([]);
  });
});
