/**
 * The Workers bundle of a minimal fetch handler on the core, built as wrangler builds it (esbuild, minified, the
 * `workerd` / `worker` / `browser` conditions, never `node`), and its bytes by package from esbuild's metafile.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

/** The handler a Workers user writes: a receiver made once from the environment, one handler, the fetch export. */
const WORKER_SOURCE = `
import { createFetchHandler, createReceiver } from '@kyb-webhooks/core';
let handle;
export default {
  fetch(request, env, ctx) {
    handle ??= createFetchHandler(
      createReceiver({
        secrets: { '1': env.KYB_SECRET },
        attestation: { issuer: env.KYB_ATTESTATION_ISSUER, audience: env.KYB_AUDIENCE, jwksUrl: env.KYB_JWKS_URL },
      }).on('kyb.data_request.released', async (event) => { await env.RELEASES.put(event.data.request_id, 'released') }),
    );
    return handle(request, ctx);
  },
};
`;

export interface WorkerBundle {
  /** Minified bytes of the whole bundle. */
  total: number;
  /** Bytes in the bundle by package (`@kyb-webhooks/core`, `zod`, `jose`, …), largest first. */
  byPackage: [string, number][];
}

/** The package a bundled input belongs to: the last `node_modules/<name>` in its path, or a workspace package. */
export function packageOf(path: string): string {
  const parts = path.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at >= 0) return parts[at + 1]!.startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1]!;
  const workspace = /(?:^|\/)packages\/([^/]+)\//.exec(path);
  return workspace ? `@kyb-webhooks/${workspace[1]}` : '(the handler)';
}

export async function workerBundle(): Promise<WorkerBundle> {
  const result = await build({
    stdin: { contents: WORKER_SOURCE, resolveDir: here, sourcefile: 'worker.js', loader: 'js' },
    bundle: true,
    minify: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    outfile: join(here, 'worker.out.js'),
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  const byPackage = new Map<string, number>();
  for (const [path, input] of Object.entries(output.inputs)) {
    const name = packageOf(path);
    byPackage.set(name, (byPackage.get(name) ?? 0) + input.bytesInOutput);
  }
  return { total: output.bytes, byPackage: [...byPackage].sort((a, b) => b[1] - a[1]) };
}
