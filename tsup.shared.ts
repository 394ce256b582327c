import type { Options } from 'tsup';

/**
 * The build every published package shares: ESM + CJS + type declarations with source maps, for Node 20.19+.
 * Dependencies and peer dependencies (frameworks, drivers, @kyb-webhooks/core) stay external, as tsup does by default.
 */
export function packageBuild(entry: Record<string, string>, overrides: Options = {}): Options {
  return { entry, format: ['esm', 'cjs'], dts: true, sourcemap: true, clean: true, target: 'es2022', ...overrides };
}
