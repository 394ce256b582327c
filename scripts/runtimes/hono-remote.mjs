// The adapter conformance cases against an app served by Bun.serve, Deno.serve or workerd, for each entry point that
// runs there: the Hono adapter (packages/hono/src/hono.runtime.ts) and the core's fetch handler
// (scripts/runtimes/fetch/app.mjs). Bundles the app with the conditions that runtime's users get, serves it on
// 127.0.0.1, then runs the matching tests/runtimes/*-remote.conformance.ts in vitest on this machine's Node against it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { brokenFiles, freePort, noNodeModules } from './workerd.mjs';

const scripts = dirname(fileURLToPath(import.meta.url));

/** The entry points the remote cases run against: where their per-runtime entries are, and which cases. */
const APPS = {
  hono: {
    title: "the Hono adapter's conformance cases against a Hono app",
    dir: join(scripts, 'hono'),
    cases: 'tests/runtimes/hono-remote.conformance.ts',
    label: 'hono',
  },
  fetch: {
    title: "the fetch handler's conformance cases against createFetchHandler",
    dir: join(scripts, 'fetch'),
    cases: 'tests/runtimes/fetch-remote.conformance.ts',
    label: 'createFetchHandler',
  },
};

const TARGETS = {
  // What `bun` and `deno` resolve for a user of the built packages ("bun"/"deno", then "node"); workerd never "node".
  bun: { label: 'Bun.serve', conditions: ['bun', 'node'], platform: 'node' },
  deno: { label: 'Deno.serve', conditions: ['deno', 'node'], platform: 'node' },
  workerd: { label: 'workerd', conditions: ['workerd', 'worker', 'browser'], platform: 'neutral' },
};

/** Starts the app on the runtime; resolves with its origin and a stop function. */
async function serve(runtime, bin, file, dir) {
  let port;
  let args;
  if (runtime === 'workerd') {
    port = await freePort();
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .app),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
# No compatibilityFlags: no nodejs_compat.
const app :Workerd.Worker = (modules = [(name = "app.js", esModule = embed "app.js")], compatibilityDate = "2026-11-01");
`,
    );
    args = ['serve', join(dir, 'config.capnp')];
  } else {
    // Deno gets the network only: the adapter and the core need nothing else.
    args = runtime === 'deno' ? ['run', '--allow-net=127.0.0.1', file] : [file];
  }
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve(`${runtime} exited (${code ?? signal})`)),
  );
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    process.stdout.write(chunk);
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  const started = Date.now();
  for (;;) {
    port ??= /"port":(\d+)/.exec(stdout)?.[1];
    if (port) {
      try {
        const probe = await fetch(`http://127.0.0.1:${port}/__control/ping`);
        if (probe.status === 404) return { origin: `http://127.0.0.1:${port}`, stop };
      } catch {
        // not listening yet
      }
    }
    const gone = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 100))]);
    if (gone || Date.now() - started > 20_000) {
      await stop();
      throw new Error(gone ?? `${runtime} did not start serving within 20 s`);
    }
  }
}

/**
 * Runs the Hono adapter's conformance cases against the Hono app on `runtime`; returns a table row.
 *
 * @example
 * ```js
 * const row = await runHonoRemote({ root, runtime: 'bun', bin, out, vitest })
 * ```
 */
export function runHonoRemote(options) {
  return runRemoteConformance({ ...options, app: 'hono' });
}

/**
 * Runs the fetch handler's conformance cases against createFetchHandler served by `runtime`; returns a table row.
 *
 * @example
 * ```js
 * const row = await runFetchRemote({ root, runtime: 'deno', bin, out, vitest })
 * ```
 */
export function runFetchRemote(options) {
  return runRemoteConformance({ ...options, app: 'fetch' });
}

async function runRemoteConformance({ root, runtime, bin, out, vitest, app }) {
  const target = TARGETS[runtime];
  const entry = APPS[app];
  const suites = `${entry.label} conformance over ${target.label} (vitest on node)`;
  const dir = join(out, `${app}-${runtime}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'app.js');
  console.log(`\n› ${runtime}: ${entry.title} served by ${target.label}`);
  try {
    await build({
      entryPoints: [join(entry.dir, `${runtime}.mjs`)],
      bundle: true,
      format: 'esm',
      outfile: file,
      platform: target.platform,
      target: 'es2022',
      conditions: [...target.conditions, '@kyb-webhooks/source'],
      mainFields: ['module', 'main'],
      plugins: runtime === 'workerd' ? [noNodeModules(root)] : [],
      logLevel: 'silent',
    });
  } catch (error) {
    const messages = (error.errors ?? [{ text: String(error) }]).map((entry) => entry.text);
    console.error(`✗ the ${runtime} app does not build:\n  ${messages.join('\n  ')}`);
    return { suites, passed: 0, failed: 1, note: `app bundle failed: ${messages[0]}` };
  }
  let server;
  try {
    server = await serve(runtime, bin, file, dir);
  } catch (error) {
    return { suites, passed: 0, failed: 1, note: `the app did not start: ${error.message}` };
  }
  const json = join(dir, 'results.json');
  try {
    const config = join(root, 'tests', 'runtimes', 'vitest.remote.config.ts');
    spawnSync(
      process.execPath,
      [
        vitest,
        'run',
        '--config',
        config,
        '--reporter=dot',
        '--reporter=json',
        `--outputFile.json=${json}`,
        entry.cases,
      ],
      {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, KYB_REMOTE_ORIGIN: server.origin, KYB_REMOTE_NAME: target.label },
      },
    );
  } finally {
    await server.stop();
  }
  if (!existsSync(json)) return { suites, passed: 0, failed: 1, note: 'vitest wrote no results' };
  const results = JSON.parse(readFileSync(json, 'utf8'));
  const skipped = results.numPendingTests + results.numTodoTests;
  const reason = results.testResults
    .flatMap((file) => file.assertionResults)
    .find((test) => test.status !== 'passed')?.title;
  const nothingRan = results.numPassedTests === 0 && results.numFailedTests === 0;
  // In CI a conformance run that ran no case is a failure, never a silent skip.
  const ci = process.env.CI === 'true';
  return {
    suites,
    passed: results.numPassedTests,
    failed: results.numFailedTests + brokenFiles(results) + (ci && nothingRan ? 1 : 0),
    skipped: !ci && nothingRan && skipped > 0,
    note: skipped ? `${skipped} skipped${reason ? `: ${reason}` : ''}` : undefined,
  };
}
