import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_PACKAGE, REPO, runCli } from './e2e-support.js';

// Users who install the CLI (or use the test kit's signer) must not need vitest: it is an optional peer of
// @kyb-webhooks/testing, needed only by its ./store-suite and ./adapter-suite entries. These runs make vitest
// unresolvable with a module hook, as if it were not installed.
const BLOCK_VITEST =
  'data:text/javascript,' +
  encodeURIComponent(
    `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  if (specifier === 'vitest' || specifier.startsWith('vitest/')) {
    const error = new Error("Cannot find package 'vitest' (made unresolvable by the test)");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}\`));`,
  );

const TESTING = join(REPO, 'packages', 'testing');
const dir = mkdtempSync(join(tmpdir(), 'kyb-cli-novitest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function importWithoutVitest(specifier: string, conditions: string[]) {
  const script = `const kit = await import(${JSON.stringify(specifier)}); console.log(Object.keys(kit).sort().join(','));`;
  return spawnSync(
    process.execPath,
    [...conditions, '--import', BLOCK_VITEST, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: CLI_PACKAGE,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
}

describe('without vitest installed', () => {
  it('the CLI runs (keys)', async () => {
    const run = await runCli(['keys', '--keys', join(dir, 'dev-keys.json')], { nodeArgs: ['--import', BLOCK_VITEST] });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('KYB_JWKS_URL=');
    expect(run.code).toBe(0);
  });

  it('the main entry of @kyb-webhooks/testing (signer, sender, service) imports, from its sources', () => {
    const run = importWithoutVitest('@kyb-webhooks/testing', ['--conditions=@kyb-webhooks/source']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('createTestSender');
    expect(run.stdout).toContain('createTestSigner');
    expect(run.stdout).toContain('startKybService');
    expect(run.status).toBe(0);
  });

  it('the hook works: the ./adapter-suite entry, which needs vitest, does not import', () => {
    const run = importWithoutVitest('@kyb-webhooks/testing/adapter-suite', ['--conditions=@kyb-webhooks/source']);
    expect(run.stderr).toContain("Cannot find package 'vitest' (made unresolvable by the test)");
    expect(run.status).not.toBe(0);
  });

  it('the built main entry imports (ESM), and the CommonJS build requires no vitest', (context) => {
    const built = join(TESTING, 'dist', 'index.js');
    if (!existsSync(built)) {
      // CI builds every package before the tests; on a laptop, say how to include this case.
      if (process.env.CI === 'true')
        throw new Error('packages/testing/dist is missing: the build must run before the tests.');
      context.skip(
        'packages/testing is not built; run `pnpm -r --filter ./packages/testing run build` to include this case',
      );
    }
    const run = importWithoutVitest('@kyb-webhooks/testing', []);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('createTestSigner');
    expect(run.status).toBe(0);
    expect(readFileSync(join(TESTING, 'dist', 'index.cjs'), 'utf8')).not.toMatch(/require\(["']vitest/);
  });

  it('package.json marks vitest an optional peer of @kyb-webhooks/testing', () => {
    const manifest = JSON.parse(readFileSync(join(TESTING, 'package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    expect(manifest.peerDependencies?.vitest).toBeDefined();
    expect(manifest.peerDependenciesMeta?.vitest?.optional).toBe(true);
  });
});
