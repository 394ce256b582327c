import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The vitest config StrykerJS runs (see stryker.config.mjs): the root config with only the test files of the
// mutated packages, and without the globalSetup that starts database servers, which none of them needs.
// KYB_MUTATE_TARGET is set by stryker.config.mjs ("core" or "adapters").
const TESTS: Record<string, string[]> = {
  core: ['packages/core/src/**/*.test.ts'],
  adapters: ['packages/{express,fastify,koa,hono,node}/src/**/*.test.ts'],
};
const target = process.env['KYB_MUTATE_TARGET'] ?? 'core';
const include = TESTS[target];
if (!include) throw new Error(`KYB_MUTATE_TARGET must be one of ${Object.keys(TESTS).join(', ')}; got "${target}".`);

export default defineConfig({
  ...base,
  test: { ...base.test, include, globalSetup: [] },
});
