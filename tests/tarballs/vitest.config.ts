import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The tarball tests (`node scripts/run.mjs test` runs them after packing; alone: `npm run pack`, then
// `npx vitest run --config tests/tarballs/vitest.config.ts`). Not part of the main vitest run: their files end in
// `.tarball.ts`, and their global setup installs the packs with npm, which takes a registry and tens of seconds.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { conditions: ['@kyb-webhooks/source'] },
  ssr: { resolve: { conditions: ['@kyb-webhooks/source', 'node'] } },
  test: {
    include: ['tests/tarballs/**/*.tarball.ts'],
    globalSetup: ['tests/tarballs/global-setup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Each test starts a server and the CLI, both through npx: a few at a time on a 2-core machine.
    maxConcurrency: 4,
  },
});
