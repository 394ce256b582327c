import { fileURLToPath } from 'node:url';
import { mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// The repository's vitest config plus the remote conformance entry, which the regular run does not include (it needs
// an app served by another runtime: scripts/runtimes/hono-remote.mjs).
export default mergeConfig(base, {
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: { include: ['tests/runtimes/*.conformance.ts'] },
});
