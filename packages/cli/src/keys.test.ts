import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, CLI_PACKAGE, freePort, runCli } from './e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

const dir = mkdtempSync(join(tmpdir(), 'kyb-cli-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keys', () => {
  it('creates .kyb-webhooks/dev-keys.json in the current directory with mode 0600 and a .gitignore, on first use', async () => {
    const project = join(dir, 'project');
    mkdirSync(project);
    const run = await runCli(['keys'], { cwd: project });
    expect(run.code).toBe(0);
    expect(statSync(join(project, '.kyb-webhooks', 'dev-keys.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(project, '.kyb-webhooks', '.gitignore'), 'utf8')).toBe('*\n');
    expect(run.stdout).toContain('(just created)');
  });

  it('prints the variables the example apps read, with the values the keys file holds', async () => {
    const file = join(dir, 'print', 'dev-keys.json');
    const run = await runCli(['keys', '--keys', file, '--jwks-port', '45123']);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { secrets: Record<string, string>; audience: string };
    const env = Object.fromEntries(
      run.stdout
        .split('\n')
        .filter((line) => /^[A-Z_0-9]+=/.test(line))
        .map((line) => line.split(/=(.*)/s).slice(0, 2)),
    );
    expect(env).toEqual({
      KYB_SECRET_V1: stored.secrets['1'],
      KYB_SECRET_V2: stored.secrets['2'],
      KYB_ATTESTATION_ISSUER: 'https://kyb.example.test',
      KYB_AUDIENCE: stored.audience,
      KYB_JWKS_URL: 'http://127.0.0.1:45123/.well-known/kyb-jwks.json',
    });
    expect(run.code).toBe(0);
  });

  it('gives the same keys on every run (the dev server and the CLI agree across restarts), --export for a shell', async () => {
    const file = join(dir, 'stable', 'dev-keys.json');
    const first = await runCli(['keys', '--keys', file, '--json']);
    const second = await runCli(['keys', '--keys', file, '--export']);
    const env = (JSON.parse(first.stdout) as { env: Record<string, string> }).env;
    for (const [name, value] of Object.entries(env)) expect(second.stdout).toContain(`export ${name}=${value}\n`);
    expect(second.stdout).not.toContain('just created');
  });

  it('a damaged keys file: exit 2, names the file and the fix, prints none of its secrets', async () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify({ version: 1, secrets: { '1': 'whsec_do_not_print_me' } }), { mode: 0o600 });
    const run = await runCli(['send', 'data_request.refused', '--to', 'http://127.0.0.1:1/x', '--keys', file]);
    expect(run.stderr).toContain(
      `The keys file ${file} cannot be used: "kid" is missing. Delete it to create new development keys`,
    );
    expect(run.stdout + run.stderr).not.toContain('whsec_do_not_print_me');
    expect(run.code).toBe(2);
  });
});

describe('a keys file that cannot be used: exit 2, the file and the fix, never a stack', () => {
  const good = join(dir, 'good', 'dev-keys.json');
  const damaged = (name: string, change: (keys: Record<string, unknown>) => void): string => {
    const keys = JSON.parse(readFileSync(good, 'utf8')) as Record<string, unknown>;
    change(keys);
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(keys), { mode: 0o600 });
    return file;
  };

  it.each([
    [
      'a public key that is not the private key\u2019s half',
      (keys: Record<string, unknown>) => {
        keys.publicJwk = {
          ...generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }),
          kid: keys.kid,
          alg: 'RS256',
          use: 'sig',
        };
      },
      '"publicJwk" is not the public half of "privateKeyPem"',
    ],
    [
      'a PEM that does not parse',
      (keys: Record<string, unknown>) => {
        keys.privateKeyPem = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n';
      },
      '"privateKeyPem" is not a PEM private key',
    ],
    [
      'a JWKS port beyond 65535',
      (keys: Record<string, unknown>) => {
        keys.jwksPort = 70000;
      },
      '"jwksPort" is not a port number from 1 to 65535',
    ],
  ])('%s', async (_case, change, problem) => {
    if (!existsSync(good)) expect((await runCli(['keys', '--keys', good])).code).toBe(0);
    const file = damaged(problem.replace(/\W+/g, '-'), change);
    const run = await runCli(['send', 'data_request.released', '--to', 'http://127.0.0.1:1/x', '--keys', file]);
    expect(run.stderr).toContain(
      `The keys file ${file} cannot be used: ${problem}. Delete it to create new development keys`,
    );
    expect(run.stderr).not.toContain('unexpected');
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
  });

  it('a keys path that is a directory', async () => {
    const folder = join(dir, 'a-directory');
    mkdirSync(folder);
    const run = await runCli(['keys', '--keys', folder]);
    expect(run.stderr).toContain(
      `Could not read the keys file ${folder} (EISDIR): check that it is a file you can read, or pass --keys <file>.`,
    );
    expect(run.code).toBe(2);
  });
});

describe('a keys file in a git work tree', () => {
  const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' });

  it('--keys outside .kyb-webhooks and not ignored: warns, naming the .gitignore line; the default location does not', async (context) => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    if (git(repo, 'init', '-q').status !== 0) return context.skip('git is not installed');
    const run = await runCli(['keys', '--keys', join('config', 'dev-keys.json')], { cwd: repo });
    expect(run.stderr).toContain(
      `warning: ${join(repo, 'config', 'dev-keys.json')} holds development secrets and git does not ignore it: add the line /config/dev-keys.json to ${join(repo, '.gitignore')}.`,
    );
    expect(run.code).toBe(0);
    writeFileSync(join(repo, '.gitignore'), '/config/dev-keys.json\n');
    expect((await runCli(['keys', '--keys', join('config', 'dev-keys.json')], { cwd: repo })).stderr).not.toContain(
      'warning',
    );
    expect((await runCli(['keys'], { cwd: repo })).stderr).not.toContain('warning');
  });
});

describe('jwks serve', () => {
  it('without a keys file: exit 2, says to run `kyb-webhooks keys`, creates none', async () => {
    const empty = join(dir, 'jwks-no-keys');
    mkdirSync(empty);
    const run = await runCli(['jwks', 'serve'], { cwd: empty });
    expect(run.stderr).toContain(
      `no development keys at ${join(empty, '.kyb-webhooks', 'dev-keys.json')}: run \`kyb-webhooks keys\` first`,
    );
    expect(existsSync(join(empty, '.kyb-webhooks'))).toBe(false);
    expect(run.code).toBe(2);
  });

  it('serves the public key of the keys file on 127.0.0.1 at the port of KYB_JWKS_URL until stopped', async () => {
    const file = join(dir, 'jwks', 'dev-keys.json');
    const port = await freePort();
    const created = JSON.parse(
      (await runCli(['keys', '--keys', file, '--jwks-port', String(port), '--json'])).stdout,
    ) as { kid: string; env: Record<string, string> };
    const child = spawn(
      process.execPath,
      ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/cli.ts', 'jwks', 'serve', '--keys', file],
      {
        cwd: CLI_PACKAGE,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await expect.poll(() => output, { timeout: 30_000 }).toContain('Press Ctrl-C to stop.');
      expect(output).toContain(`Serving the development JWKS (kid ${created.kid}) at ${created.env.KYB_JWKS_URL}`);
      const jwks = (await (await fetch(created.env.KYB_JWKS_URL!)).json()) as { keys: Record<string, unknown>[] };
      expect(jwks.keys).toEqual([expect.objectContaining({ kid: created.kid, kty: 'RSA', alg: 'RS256', use: 'sig' })]);
      expect(jwks.keys[0]).not.toHaveProperty('d'); // the public half only
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toBe(0);
    }
    expect(existsSync(file)).toBe(true);
  });
});

describe('the program', () => {
  it('--help lists every command and the exit codes, exit 0', async () => {
    const run = await runCli(['--help']);
    for (const command of ['keys', 'jwks', 'send', 'scenario', 'verify', 'replay'])
      expect(run.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(run.stdout).toContain(
      'Exit codes: 0 ok, 1 a check or expectation failed (or the app could not be reached), 2 usage error.',
    );
    expect(run.code).toBe(0);
  });

  it('an unknown command is a usage error, exit 2', async () => {
    const run = await runCli(['sned', 'data_request.refused']);
    expect(run.stderr).toContain("unknown command 'sned'");
    expect(run.code).toBe(2);
  });
});
