import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources through the "@kyb-webhooks/source" export condition, so no build is
// needed first; `.ci/run` separately builds the packages and checks their published shape.
export default defineConfig({
  resolve: { conditions: ['@kyb-webhooks/source'] },
  ssr: { resolve: { conditions: ['@kyb-webhooks/source', 'node'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'bench/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Starts the Redis/PostgreSQL/MariaDB servers that the selected store tests need (see the file's header).
    globalSetup: ['./scripts/services/global-setup.ts'],
  },
});
