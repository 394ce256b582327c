import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources through the "@kyb-webhooks/source" export condition, so no build is
// needed first; `.ci/run` separately builds the packages and checks their published shape.
export default defineConfig({
  resolve: { conditions: ['@kyb-webhooks/source'] },
  ssr: { resolve: { conditions: ['@kyb-webhooks/source', 'node'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/core/*.test.ts',
      'packages/core/fuzz/**/*.test.ts',
      'packages/core/scripts/**/*.test.ts',
      'bench/src/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Receivers created without a logger print one line per rejection on the console (the library's default);
    // thousands of tests reject deliveries on purpose, so those lines are dropped here. The default logger's own
    // tests pass a console of their own and still see every line.
    // oidc-provider, the login tests' stand-in for the service, warns at every start that it keeps its state in memory
    // (as a test fixture should) and, on Node 20, that it prefers Node 22: known, and not about our code.
    onConsoleLog: (log) =>
      log.startsWith('kyb-webhooks ') || log.startsWith('oidc-provider WARNING') ? false : undefined,
    // Starts the Redis/PostgreSQL/MariaDB servers that the selected store tests need (see the file's header).
    globalSetup: ['./scripts/services/global-setup.ts'],
  },
});
