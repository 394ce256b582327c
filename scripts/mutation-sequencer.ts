import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order StrykerJS's vitest runs test files in (vitest.mutation.config.ts). A static mutant (module-load code:
 * schemas, tables) runs every test file, one at a time, until the first failure (Stryker's bail): the sooner a
 * file that kills it runs, the cheaper the mutant. vitest's own order is longest first, the worst one for that.
 * So: the test files of the folders under mutation first (KYB_MUTATE_SCOPE, set by stryker.config.mjs from
 * `--mutate`), those right in the folder before those in its sub-folders (for the core's top-level files, whose
 * folder holds every test, the tests named after them come before all of pipeline/, verify/ and the rest), then the
 * rest; within each group, smaller files first (a cheap stand-in for shorter); the fuzz harness and the store
 * conformance suite (thousands of generated cases) last.
 */
export class MutationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const scopes = (process.env['KYB_MUTATE_SCOPE'] ?? '').split(',').filter(Boolean);
    const rank = (file: string): number => {
      const path = relative(root, file);
      if (/(^|\/)fuzz\/|store-suite\//.test(path)) return 3;
      const inScope = scopes.filter((scope) => path.startsWith(scope));
      if (inScope.length === 0) return 2;
      return inScope.some((scope) => !path.slice(scope.length).includes('/')) ? 0 : 1;
    };
    const keyed = files.map((spec) => ({ spec, rank: rank(spec.moduleId), size: statSync(spec.moduleId).size }));
    keyed.sort((a, b) => a.rank - b.rank || a.size - b.size);
    return keyed.map(({ spec }) => spec);
  }
}
