import { fileURLToPath } from 'node:url';
import { mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// The repository's own vitest config, run from the repository root, for vitest under another runtime. One change:
// Bun answers `'__esModule' in namespace` with true for every ES module namespace, so vitest's default-export interop
// swaps `import { z } from 'zod'` for zod's inner namespace (z.z is undefined). Our externals are all ES modules, so
// the interop is not needed anywhere.
export default mergeConfig(base, {
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: { deps: { interopDefault: false }, setupFiles: [fileURLToPath(new URL('./probe.ts', import.meta.url))] },
});
