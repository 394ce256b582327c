import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { createLogin } from '@kyb-webhooks/login';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CLI_PACKAGE, CLI_TEST_TIMEOUT_MS, freePort, runCli } from './e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

const running: ChildProcess[] = [];
afterAll(async () => {
  for (const child of running) if (child.exitCode === null) await stop(child);
});

/** `kyb-webhooks login-server <args>` as a child process, resolved once it printed its last line. */
async function startLoginServer(...args: string[]): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'src/cli.ts', 'login-server', ...args],
    { cwd: CLI_PACKAGE, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await expect
    .poll(() => (child.exitCode === null ? stdout : `exited ${child.exitCode}: ${stderr}`), { timeout: 30_000 })
    .toMatch(/# Press Ctrl-C to stop\.\n$|"pid": \d+\n}\n$/);
  return { child, output: () => stdout };
}

/** SIGTERM by the child's id; its exit code. */
function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  process.kill(child.pid!, 'SIGTERM');
  return exited;
}

const variables = (stdout: string) =>
  Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => /^(export )?[A-Z_]+=/.test(line))
      .map((line) =>
        line
          .replace(/^export /, '')
          .split(/=(.*)/s)
          .slice(0, 2),
      ),
  ) as Record<string, string>;

describe('login-server', () => {
  it('serves discovery on 127.0.0.1:<port>, prints paste-ready variables that createLogin accepts, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const { child, output } = await startLoginServer('--port', String(port));
    const issuer = `http://127.0.0.1:${port}`;
    const env = variables(output());
    expect(env).toEqual({
      KYB_AUTH_URL: issuer,
      KYB_CLIENT_ID: 'merchant-backend',
      KYB_CLIENT_SECRET: expect.stringMatching(/^[\w-]{32}$/),
      KYB_REDIRECT_URI: 'http://127.0.0.1:3000/auth/callback',
      KYB_LOGIN_AUDIENCE: 'https://api.merchant.test',
      LOGIN_COOKIE_SECRET: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
    });
    expect(output()).toContain(`# Local login server (OpenID provider) at ${issuer}`);

    const discovery = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(await discovery.json()).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth2/auth`,
      token_endpoint: `${issuer}/oauth2/token`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      code_challenge_methods_supported: ['S256'],
    });
    // What the login quick starts do with these variables: discovery by issuer and the login JWKS, at start-up.
    await expect(
      createLogin({
        authUrl: env.KYB_AUTH_URL!,
        clientId: env.KYB_CLIENT_ID!,
        clientSecret: env.KYB_CLIENT_SECRET!,
        redirectUri: env.KYB_REDIRECT_URI!,
        audience: env.KYB_LOGIN_AUDIENCE!,
        secret: env.LOGIN_COOKIE_SECRET!,
        allowInsecureRequests: true,
      }),
    ).resolves.toBeDefined();

    expect(await stop(child)).toBe(0);
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });

  it('--json --redirect-uri (twice) --audience: the issuer, the clients and the variables, for scripts', async () => {
    const port = await freePort();
    const { child, output } = await startLoginServer(
      '--port',
      String(port),
      '--json',
      '--redirect-uri',
      'http://127.0.0.1:4000/auth/callback',
      '--redirect-uri',
      'http://localhost:4000/auth/callback',
      '--audience',
      'https://api.shop.test',
    );
    const printed = JSON.parse(output()) as Record<string, unknown> & { env: Record<string, string> };
    expect(printed).toMatchObject({
      issuer: `http://127.0.0.1:${port}`,
      discovery: `http://127.0.0.1:${port}/.well-known/openid-configuration`,
      confidentialClient: { clientId: 'merchant-backend', clientSecret: printed.env.KYB_CLIENT_SECRET },
      publicClient: { clientId: 'merchant-spa' },
      audiences: ['https://api.shop.test'],
      redirectUris: ['http://127.0.0.1:4000/auth/callback', 'http://localhost:4000/auth/callback'],
      pid: child.pid,
    });
    expect(printed.env).toMatchObject({
      KYB_REDIRECT_URI: 'http://127.0.0.1:4000/auth/callback',
      KYB_LOGIN_AUDIENCE: 'https://api.shop.test',
    });
    expect(await stop(child)).toBe(0);
  });

  it('--export prefixes each variable for a shell', async () => {
    const { child, output } = await startLoginServer('--port', String(await freePort()), '--export');
    expect(output()).toMatch(/^export KYB_AUTH_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(output()).not.toMatch(/^KYB_/m);
    expect(await stop(child)).toBe(0);
  });

  it('a port in use: exit 1 and what to do', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', () => resolve()));
    const { port } = squatter.address() as { port: number };
    try {
      const run = await runCli(['login-server', '--port', String(port)]);
      expect(run.stderr).toContain(`127.0.0.1:${port} is already in use (another \`login-server\`?)`);
      expect(run.stdout).toBe('');
      expect(run.code).toBe(1);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('a redirect URI that is not a URL is a usage error, exit 2', async () => {
    const run = await runCli(['login-server', '--redirect-uri', '/auth/callback']);
    expect(run.stderr).toContain('not a URL: use the full callback URL');
    expect(run.code).toBe(2);
  });
});
