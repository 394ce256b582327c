/**
 * `npm run example -- nextjs` (scripts/run.mjs starts each example's src/server.ts): `next dev` on 127.0.0.1:PORT
 * (default 3000), configured by the environment that `npm run -s cli -- keys --export` prints. In your own project
 * that is `next dev` itself; Next's own commands are in package.json (`pnpm dev`, `pnpm build`, `pnpm start`).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv.length > 2) {
  console.error(
    `The Next.js example takes no options (${process.argv.slice(2).join(' ')}): it runs inline, with no queue mode.`,
  );
  process.exit(2);
}
const next = createRequire(join(app, 'package.json')).resolve('next/dist/bin/next');
const port = process.env.PORT ?? '3000';
const child = spawn(process.execPath, [next, 'dev', '--hostname', '127.0.0.1', '--port', port], {
  cwd: app,
  stdio: 'inherit',
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
});
console.log(`KYB webhooks on http://127.0.0.1:${port}/api/kyb/webhooks (next dev)`);
// scripts/run.mjs passes a SIGTERM on to this process; next dev gets it too, so its port is freed.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
child.once('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
