// workerd: the receiver's suites (packages/core/src/{receiver,verify/signature,verify/attestation}.test.ts) bundled with the
// worker conditions (never "node") into a worker, served by workerd on 127.0.0.1 WITHOUT nodejs_compat, run through
// one HTTP request, results back as JSON. The core's "no node: module" promise is enforced twice: the bundler fails
// when a core source file imports a node: module, and workerd itself has none to give.
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = join(dirname(fileURLToPath(import.meta.url)), 'workerd');
/** The receiver's own suites, as the brief of issue 11 names them. */
export const WORKERD_SUITES = [
  'packages/core/src/receiver.test.ts',
  'packages/core/src/verify/signature.test.ts',
  'packages/core/src/verify/attestation.test.ts',
  'packages/core/src/telemetry/channels.test.ts',
];
/** With nodejs_compat: the tracing channels, which must publish there (process.getBuiltinModule finds the module). */
export const WORKERD_COMPAT_SUITES = ['packages/core/src/telemetry/channels.test.ts'];
const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/** The esbuild plugin that maps the suites' Node-only scaffolding to workerd stand-ins and fails on node: in the core. */
function workerdPlugin(root, suites = WORKERD_SUITES) {
  const isScaffolding = (importer) =>
    importer.endsWith('.test.ts') ||
    importer.includes(`${join(root, 'packages', 'testing', 'src')}/`) ||
    importer.startsWith(here);
  return {
    name: 'kyb-workerd',
    setup(b) {
      b.onResolve({ filter: /^kyb:suites$/ }, () => ({ path: 'suites', namespace: 'kyb' }));
      b.onLoad({ filter: /.*/, namespace: 'kyb' }, () => ({
        contents:
          `export const SUITES = {\n${suites.map((suite) => `  ${JSON.stringify(suite)}: () => import(${JSON.stringify(join(root, suite))}),`).join('\n')}\n};\n` +
          // Resolved from inside the core, so its package.json "imports" map picks the module, as for a user.
          `export { platformCrypto } from '#crypto';\n`,
        resolveDir: join(root, 'packages', 'core', 'src'),
        loader: 'js',
      }));
      // A node: module the test scaffolding imports: every export of the real one as an inert stand-in (see
      // node-stub.mjs) that throws a NODE_ONLY_SCAFFOLDING error once a test really uses what it returned, so such a
      // test is reported as not runnable here rather than as passed; node:crypto's createHmac is a real HMAC.
      b.onLoad({ filter: /.*/, namespace: 'node-stub' }, async (args) => {
        const names = Object.keys(await import(`node:${args.path}`)).filter(
          (name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name),
        );
        const own = args.path === 'crypto' ? ['createHmac'] : [];
        return {
          contents: [
            `import { stub } from ${JSON.stringify(join(here, 'node-stub.mjs'))};`,
            ...own.map((name) => `export { ${name} } from ${JSON.stringify(join(here, 'node-crypto.mjs'))};`),
            ...names
              .filter((name) => !own.includes(name))
              .map((name) => `export const ${name} = stub(${JSON.stringify(`node:${args.path} ${name}`)});`),
            `export default stub(${JSON.stringify(`node:${args.path}`)});`,
          ].join('\n'),
          loader: 'js',
          resolveDir: here,
        };
      });
      // Test files get the scaffolding Buffer as a module import, never as a global the core could lean on.
      b.onLoad({ filter: /\.test\.ts$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        const needsBuffer = /\bBuffer\b/.test(source) && !/import[^;]*\bBuffer\b/.test(source);
        return {
          contents:
            (needsBuffer ? `import { Buffer } from ${JSON.stringify(join(here, 'buffer.mjs'))};\n` : '') + source,
          loader: 'ts',
        };
      });
      b.onResolve({ filter: /^vitest$/ }, () => ({ path: join(here, 'vitest-shim.mjs') }));
      b.onResolve({ filter: /\/crypto\/node(\.js)?$/ }, (args) =>
        args.importer.endsWith('.test.ts') ? { path: join(here, 'node-only.mjs') } : undefined,
      );
      b.onResolve({ filter: /\/jwks-server(\.js)?$/ }, (args) =>
        isScaffolding(args.importer) && !args.importer.startsWith(here)
          ? { path: join(here, 'jwks-server.mjs') }
          : undefined,
      );
      b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
        if (!BUILTINS.has(args.path)) return undefined;
        if (isScaffolding(args.importer)) return { path: args.path.replace(/^node:/, ''), namespace: 'node-stub' };
        return {
          errors: [
            {
              text: `${relative(root, args.importer)} imports "${args.path}", which workerd (without nodejs_compat) does not have: the core must run on Web-standard runtimes`,
            },
          ],
        };
      });
    },
  };
}

/**
 * Fails the build on any node: import (workerd without nodejs_compat has none), naming the importing file.
 *
 * @example
 * ```js
 * await build({ ..., plugins: [noNodeModules(root)] })
 * ```
 */
export function noNodeModules(root) {
  return {
    name: 'no-node-modules',
    setup(b) {
      b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
        BUILTINS.has(args.path)
          ? {
              errors: [
                {
                  text: `${relative(root, args.importer)} imports "${args.path}", which workerd (without nodejs_compat) does not have: the core must run on Web-standard runtimes`,
                },
              ],
            }
          : undefined,
      );
    },
  };
}

/** The folders pnpm keeps vitest's dependencies in, and those of @vitest/expect (chai). */
function vitestDependencies(root) {
  const vitest = dirname(realpathSync(join(root, 'node_modules', 'vitest')));
  const expect = dirname(dirname(realpathSync(join(vitest, '@vitest', 'expect'))));
  return [vitest, expect];
}

/**
 * Test files of a vitest JSON report that failed without a failed test (an import or a hook error): each counts as one
 * failure, so a file that never ran cannot pass as zero failures.
 *
 * @example
 * ```js
 * const failed = results.numFailedTests + brokenFiles(results)
 * ```
 */
export function brokenFiles(results) {
  return results.testResults.filter(
    (file) => file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed'),
  ).length;
}

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Bundles the suites, serves them with workerd and runs them; returns a table row. With `nodejsCompat`, the
 * {@link WORKERD_COMPAT_SUITES} run under the nodejs_compat flag instead, and the row fails unless their
 * diagnostics_channel tests ran and passed there (not merely skipped).
 *
 * @example
 * ```js
 * const row = await runWorkerd({ root, bin: 'tests/runtimes/node_modules/.bin/workerd', out: '.tmp/runtimes' })
 * ```
 */
export async function runWorkerd({ root, bin, out, nodejsCompat = false }) {
  const list = nodejsCompat ? WORKERD_COMPAT_SUITES : WORKERD_SUITES;
  const suites = nodejsCompat
    ? 'tracing channels with nodejs_compat (bundled, vitest runner)'
    : `receiver + signature + attestation + channels (bundled, vitest runner)`;
  const dir = join(out, nodejsCompat ? 'workerd-nodejs-compat' : 'workerd');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.log(
    `\n› workerd: bundling ${list.join(', ')} (conditions workerd, worker, browser) and serving it ${nodejsCompat ? 'with' : 'without'} nodejs_compat`,
  );
  let result;
  try {
    result = await build({
      entryPoints: { entry: join(here, 'entry.mjs') },
      bundle: true,
      splitting: true,
      format: 'esm',
      outdir: dir,
      platform: 'neutral',
      target: 'es2022',
      conditions: ['workerd', 'worker', 'browser', '@kyb-webhooks/source'],
      mainFields: ['module', 'main'],
      // vitest's own dependencies (@vitest/runner, @vitest/expect, @vitest/spy, chai, expect-type), the versions it uses.
      nodePaths: vitestDependencies(root),
      plugins: [workerdPlugin(root, list)],
      metafile: true,
      logLevel: 'silent',
    });
  } catch (error) {
    const messages = (error.errors ?? [{ text: String(error) }]).map(
      (entry) => `${entry.location ? `${entry.location.file}:${entry.location.line}: ` : ''}${entry.text}`,
    );
    console.error(`✗ the workerd bundle does not build:\n  ${messages.join('\n  ')}`);
    return { suites, passed: 0, failed: 1, note: `bundle failed: ${messages[0]}` };
  }
  // The guards must bite, or a passing run would prove nothing: the core's own Node module has to be refused by the
  // suites' bundle and by the Hono app's (hono-remote.mjs).
  for (const plugin of [workerdPlugin(root), noNodeModules(root)]) {
    const refused = await build({
      stdin: {
        contents: `export * from ${JSON.stringify(join(root, 'packages', 'core', 'src', 'verify', 'crypto', 'node.ts'))};`,
        resolveDir: root,
        loader: 'js',
      },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      plugins: [plugin],
      logLevel: 'silent',
    }).then(
      () => false,
      (error) => error.errors?.some((entry) => entry.text.includes('workerd (without nodejs_compat) does not have')),
    );
    if (!refused)
      return {
        suites,
        passed: 0,
        failed: 1,
        note: `the ${plugin.name} guard let packages/core/src/verify/crypto/node.ts into a workerd bundle`,
      };
  }
  const modules = Object.keys(result.metafile.outputs).map((file) => relative(dir, join(root, file)));
  modules.sort((a, b) => (a === 'entry.js' ? -1 : b === 'entry.js' ? 1 : a.localeCompare(b)));
  const port = await freePort();
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .suites),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
${nodejsCompat ? '# nodejs_compat: node: modules, and process.getBuiltinModule.' : '# No compatibilityFlags: no nodejs_compat, so no node: module and no Buffer.'}
const suites :Workerd.Worker = (
  modules = [
${modules.map((name) => `    (name = "${name}", esModule = embed "${name}"),`).join('\n')}
  ],
  compatibilityDate = "2026-11-01",${nodejsCompat ? '\n  compatibilityFlags = ["nodejs_compat"],' : ''}
);
`,
  );
  const child = spawn(bin, ['serve', join(dir, 'config.capnp'), '--verbose'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve(`workerd exited (${code ?? signal})`)),
  );
  try {
    let body;
    for (const started = Date.now(); ;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/run`, { signal: AbortSignal.timeout(180_000) });
        body = await response.json();
        break;
      } catch (error) {
        const gone = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 200))]);
        if (gone || Date.now() - started > 20_000)
          return { suites, passed: 0, failed: 1, note: `${gone ?? 'workerd did not answer'}: ${error.message}` };
      }
    }
    const failed = body.tests.filter((test) => test.state === 'fail' || test.state === 'not run');
    for (const test of failed)
      console.error(
        `  ✗ ${test.name}\n      ${test.errors.join('\n      ').split('\n').slice(0, 12).join('\n      ')}`,
      );
    const nodeOnly = body.tests.filter((test) => test.state === 'node-only');
    const passed = body.tests.filter((test) => test.state === 'pass').length;
    if (
      nodejsCompat &&
      !body.tests.some((test) => test.state === 'pass' && test.name.includes('tracing channels > '))
    ) {
      console.error('  ✗ with nodejs_compat, no tracing-channel test ran: diagnostics_channel was not found');
      return { suites, passed, failed: failed.length + 1, note: 'diagnostics_channel not found with nodejs_compat' };
    }
    console.log(
      `  workerd: ${passed} passed, ${failed.length} failed, ${body.tests.filter((test) => test.state === 'skip').length} skipped`,
    );
    for (const entry of body.skipped) console.log(`  skipped on workerd: ${entry.name} (${entry.reason})`);
    const groups = new Map();
    for (const test of nodeOnly) {
      const group = test.name.split(' > ').slice(0, -1).join(' > ');
      groups.set(group, (groups.get(group) ?? 0) + 1);
    }
    for (const [group, count] of groups)
      console.log(`  not runnable on workerd (scaffolding needs node:): ${count} in ${group}`);
    const notes = [
      body.skipped.length && `${body.skipped.length} node-only groups skipped`,
      nodeOnly.length && `${nodeOnly.length} tests need node: scaffolding`,
    ].filter(Boolean);
    return {
      suites,
      passed,
      failed: failed.length,
      note: notes.length ? `${notes.join(', ')} (listed above)` : undefined,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
