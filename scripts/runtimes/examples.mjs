// The fetch example on the runtimes it is written for (examples/fetch/src/bun.ts on Bun, src/deno.ts on Deno): bundles
// it as that runtime's users get it, starts it on 127.0.0.1 with a test secret and a test JWKS, and sends it real
// deliveries signed by the test kit: an attested release (200, its handler's line on stdout), the same again
// (200 duplicate) and a forged one (401 signature_mismatch). Each check counts as one test in the runtimes table.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const LABELS = { bun: 'Bun.serve', deno: 'Deno.serve' };

/** The test kit's signer and JWKS server, bundled once for this Node (the kit is TypeScript). */
async function loadTestKit(root, out) {
  const outfile = join(out, 'example-test-kit.mjs');
  await build({
    stdin: {
      contents: `export { createTestSigner, startJwksServer, testEvents } from ${JSON.stringify(join(root, 'packages', 'testing', 'src', 'index.ts'))};`,
      resolveDir: root,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    conditions: ['@kyb-webhooks/source', 'node'],
    logLevel: 'silent',
  });
  return import(pathToFileURL(outfile).href);
}

/** Starts the bundled example; resolves once it printed its URL. */
function start(runtime, bin, file, env) {
  const args = runtime === 'deno' ? ['run', '--allow-net=127.0.0.1', '--allow-env', file] : [file];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => void stop().then(() => reject(new Error(`${runtime} printed no URL within 20 s`))),
      20_000,
    );
    const check = () => {
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks\/kyb)/.exec(stdout)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve({ url, stop, output: () => stdout });
    };
    child.stdout.on('data', check);
    void exited.then((why) => {
      clearTimeout(timer);
      reject(new Error(why));
    });
  });
}

/**
 * Runs the fetch example on `runtime` ('bun' or 'deno') with signed deliveries; returns a table row.
 *
 * @example
 * ```js
 * const row = await runFetchExample({ root, runtime: 'deno', bin, out })
 * ```
 */
export async function runFetchExample({ root, runtime, bin, out }) {
  const suites = `examples/fetch on ${LABELS[runtime]} (signed deliveries)`;
  const dir = join(out, `example-fetch-${runtime}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.log(`\n› ${runtime}: examples/fetch/src/${runtime}.ts served by ${LABELS[runtime]}, sent signed deliveries`);
  const file = join(dir, 'app.js');
  let kit;
  try {
    await build({
      entryPoints: [join(root, 'examples', 'fetch', 'src', `${runtime}.ts`)],
      bundle: true,
      format: 'esm',
      outfile: file,
      platform: 'node',
      target: 'es2022',
      conditions: [runtime, 'node', '@kyb-webhooks/source'],
      mainFields: ['module', 'main'],
      logLevel: 'silent',
    });
    kit = await loadTestKit(root, out);
  } catch (error) {
    const messages = (error.errors ?? [{ text: String(error) }]).map((entry) => entry.text);
    console.error(`✗ the ${runtime} example does not build:\n  ${messages.join('\n  ')}`);
    return { suites, passed: 0, failed: 1, note: `example bundle failed: ${messages[0]}` };
  }
  const signer = await kit.createTestSigner();
  const jwks = await kit.startJwksServer(signer.jwks);
  const env = {
    PORT: '0',
    KYB_SECRET_V1: signer.secrets['1'],
    KYB_ATTESTATION_ISSUER: signer.issuer,
    KYB_AUDIENCE: signer.audience,
    KYB_JWKS_URL: jwks.url,
  };
  let app;
  try {
    app = await start(runtime, bin, file, env);
  } catch (error) {
    await jwks.close();
    return { suites, passed: 0, failed: 1, note: `the example did not start: ${error.message}` };
  }
  const failures = [];
  let passed = 0;
  const check = (name, ok) => (ok ? (passed += 1) : failures.push(name));
  try {
    const released = kit.testEvents.dataRequestReleased();
    const signed = await signer.sign(released);
    const post = async ({ headers, body }) => {
      const response = await fetch(app.url, { method: 'POST', headers, body });
      return { status: response.status, body: await response.json() };
    };
    const first = await post(signed);
    check(
      'attested release → 200',
      first.status === 200 && first.body.received === true && first.body.code === undefined,
    );
    const again = await post(signed);
    check('redelivery → 200 duplicate', again.status === 200 && again.body.code === 'duplicate');
    const forged = await post(await signer.sign(kit.testEvents.dataRequestRefused(), { secret: 'whsec_forged' }));
    check('forged → 401 signature_mismatch', forged.status === 401 && forged.body.error?.code === 'signature_mismatch');
    const handled = app
      .output()
      .split('\n')
      .filter((line) => line.startsWith(`released ${released.data.request_id}:`));
    check("the release handler's line, once", handled.length === 1);
  } catch (error) {
    failures.push(`a delivery failed: ${error.message}`);
  } finally {
    await app.stop();
    await jwks.close();
  }
  if (failures.length) console.error(`✗ examples/fetch on ${LABELS[runtime]}: ${failures.join('; ')}`);
  return {
    suites,
    passed,
    failed: failures.length,
    note: failures.length ? `failed: ${failures.join('; ')}` : undefined,
  };
}
