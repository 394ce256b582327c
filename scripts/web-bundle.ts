import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/**
 * Bundles a package entry the way a Worker, Deno or Bun bundler would (conditions worker and browser, no "node"),
 * from its TypeScript sources, for the tests that check a package runs on Web-standard runtimes: `code` is the
 * bundle's text (to assert that no `node:` import or `Buffer` is left), `load()` imports it as a module.
 *
 * @example
 * ```ts
 * const bundle = await bundleForWebRuntime<typeof import('./index.js')>(new URL('./index.ts', import.meta.url))
 * expect(bundle.code).not.toMatch(/["']node:/)
 * const { createReceiver } = await bundle.load()
 * ```
 */
export async function bundleForWebRuntime<Module>(entry: URL): Promise<{ code: string; load(): Promise<Module> }> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['worker', 'browser', '@kyb-webhooks/source'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  // A data: URL keeps the import away from node_modules resolution: the bundle must stand on its own.
  return {
    code,
    load: () => import(`data:text/javascript;base64,${btoa(unescape(encodeURIComponent(code)))}`) as Promise<Module>,
  };
}
