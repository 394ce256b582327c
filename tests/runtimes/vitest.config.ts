import { fileURLToPath } from 'node:url';
import { mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// The repository's own vitest config, run from the repository root, for vitest under another runtime
// (scripts/runtimes/run.mjs). Two additions:
// - no default-export interop: Bun answers `'__esModule' in namespace` with true for every ES module namespace, so
//   vitest's interop swaps `import { z } from 'zod'` for zod's inner namespace (z.z is undefined). Our externals are
//   all ES modules, so the interop is not needed anywhere;
// - a setup file that records which runtime each test worker really is (probe.ts).
export default mergeConfig(base, {
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: { deps: { interopDefault: false }, setupFiles: [fileURLToPath(new URL('./probe.ts', import.meta.url))] },
});
