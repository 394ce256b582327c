import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { MutationSequencer } from './scripts/mutation-sequencer.js';

// The vitest config StrykerJS runs (see stryker.config.mjs): the root config with only the test files of the
// mutated packages, and without the globalSetup that starts database servers, which none of them needs.
// KYB_MUTATE_TARGET is set by stryker.config.mjs (core, adapters, client or login).
const TESTS: Record<string, string[]> = {
  // The memory store's and memory queue's conformance runs live with their suites in the test kit; they guard the core's.
  core: [
    'packages/core/src/**/*.test.ts',
    'packages/core/fuzz/**/*.test.ts',
    'packages/testing/src/store-suite/memory-store.test.ts',
    'packages/testing/src/queue-suite/memory-queue.test.ts',
  ],
  adapters: ['packages/{express,fastify,koa,hono,node}/src/**/*.test.ts'],
  client: ['packages/client/src/**/*.test.ts'],
  login: ['packages/login/src/**/*.test.ts'],
};
const target = process.env['KYB_MUTATE_TARGET'] ?? 'core';
const include = TESTS[target];
if (!include) throw new Error(`KYB_MUTATE_TARGET must be one of ${Object.keys(TESTS).join(', ')}; got "${target}".`);

// Stryker's sandbox links each package's node_modules to the real workspace, so `@kyb-webhooks/core` imported by the
// test kit (the adapter suite, expectConfigInvalid) would load the workspace's core next to the sandbox's mutated one:
// two KybWebhookError classes, and `instanceof` fails. Every import of the core (its root and its ./store, ./adapter and ./schemas
// subpaths) resolves to this tree's sources.
const coreEntry = (file: string) => fileURLToPath(new URL(`./packages/core/src/${file}`, import.meta.url));

export default defineConfig({
  ...base,
  resolve: {
    ...base.resolve,
    alias: [
      { find: /^@kyb-webhooks\/core$/, replacement: coreEntry('index.ts') },
      { find: /^@kyb-webhooks\/core\/store$/, replacement: coreEntry('store.ts') },
      { find: /^@kyb-webhooks\/core\/adapter$/, replacement: coreEntry('adapter.ts') },
      { find: /^@kyb-webhooks\/core\/queue$/, replacement: coreEntry('queue.ts') },
      { find: /^@kyb-webhooks\/core\/schemas$/, replacement: coreEntry('schemas.ts') },
    ],
  },
  test: { ...base.test, include, globalSetup: [], sequence: { sequencer: MutationSequencer } },
});
