import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError, EXIT } from '../errors.js';
import { parseIntegerInRange } from '../options.js';
import { print, printJson } from '../output.js';

/**
 * The port `login-server` listens on unless `--port` says otherwise: next to the development JWKS's (4479).
 *
 * @example
 * ```ts
 * `http://127.0.0.1:${DEFAULT_LOGIN_SERVER_PORT}` // the issuer, KYB_AUTH_URL
 * ```
 */
export const DEFAULT_LOGIN_SERVER_PORT = 4480;

/** The callback the example apps and the login quick starts mount (their default port, 3000). */
const DEFAULT_REDIRECT_URI = 'http://127.0.0.1:3000/auth/callback';
const DEFAULT_AUDIENCE = 'https://api.merchant.test';

/**
 * Options of `login-server`.
 *
 * @example
 * ```ts
 * const options: LoginServerOptions = { port: 4480, redirectUri: ['http://127.0.0.1:3000/auth/callback'], audience: 'https://api.merchant.test' }
 * ```
 */
export interface LoginServerOptions {
  port: number;
  redirectUri: string[];
  audience: string;
  export?: boolean;
  json?: boolean;
}

/**
 * The variables the login quick starts (packages/login/README.md) and the example apps read, for a provider at
 * `issuer` and its confidential client: paste-ready, as `keys` prints the webhook ones.
 *
 * @example
 * ```ts
 * loginServerEnv({ issuer, clientId, clientSecret, redirectUri, audience, cookieSecret }).KYB_AUTH_URL // issuer
 * ```
 */
export function loginServerEnv(values: {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  audience: string;
  cookieSecret: string;
}): Record<string, string> {
  return {
    KYB_AUTH_URL: values.issuer,
    KYB_CLIENT_ID: values.clientId,
    KYB_CLIENT_SECRET: values.clientSecret,
    KYB_REDIRECT_URI: values.redirectUri,
    KYB_LOGIN_AUDIENCE: values.audience,
    LOGIN_COOKIE_SECRET: values.cookieSecret,
  };
}

function redirectUri(value: string, previous: string[] | undefined): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`not a URL: use the full callback URL, e.g. ${DEFAULT_REDIRECT_URI}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('use an http(s) URL');
  // The first --redirect-uri replaces the default; later ones add to it.
  return previous === undefined || previous === DEFAULT_REDIRECTS ? [value] : [...previous, value];
}
const DEFAULT_REDIRECTS = [DEFAULT_REDIRECT_URI];

/**
 * Registers `login-server [--port] [--redirect-uri …] [--audience]`: a local OpenID provider configured like the
 * service's login server (the one the login package's tests and `npm run demo -- login` use), on 127.0.0.1 until
 * SIGINT or SIGTERM. It prints its issuer, its clients and the environment of the login quick starts.
 *
 * @example
 * ```ts
 * registerLoginServer(program) // kyb-webhooks login-server --port 4480
 * ```
 */
export function registerLoginServer(program: Command): void {
  program
    .command('login-server')
    .description(
      'run a local OpenID provider like the service\u2019s login server on 127.0.0.1 until interrupted (Ctrl-C), and print the variables "Sign in with the service" needs',
    )
    .addOption(
      new Option('--port <port>', 'port to listen on; the issuer is http://127.0.0.1:<port>')
        .argParser(parseIntegerInRange(1, 65535))
        .default(DEFAULT_LOGIN_SERVER_PORT),
    )
    .addOption(
      new Option(
        '--redirect-uri <url>',
        'a redirect URI registered for the clients (repeat for more; the first is KYB_REDIRECT_URI)',
      )
        .argParser(redirectUri)
        .default(DEFAULT_REDIRECTS, DEFAULT_REDIRECT_URI),
    )
    .option('--audience <audience>', 'the audience registered for the clients (KYB_LOGIN_AUDIENCE)', DEFAULT_AUDIENCE)
    .option('--export', 'prefix each variable with "export " for a shell')
    .option('--json', 'print the issuer, the clients and the variables as JSON for scripts')
    .action(async (options: LoginServerOptions) => {
      // Loaded here: oidc-provider is large, and no other command needs it.
      const { startLoginProvider, LOGIN_TEST_ADDRESS } = await import('@kyb-webhooks/login/testing');
      let provider;
      try {
        provider = await startLoginProvider({
          port: options.port,
          redirectUris: options.redirectUri,
          audiences: [options.audience],
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new CliError(
          code === 'EADDRINUSE'
            ? `127.0.0.1:${options.port} is already in use (another \`login-server\`?). Stop that process, or pick another port with --port.`
            : `Could not listen on 127.0.0.1:${options.port} (${code}).`,
        );
      }
      const env = loginServerEnv({
        issuer: provider.issuer,
        clientId: provider.confidentialClient.clientId,
        clientSecret: provider.confidentialClient.clientSecret,
        redirectUri: options.redirectUri[0]!,
        audience: options.audience,
        cookieSecret: randomBytes(32).toString('base64'),
      });
      const discovery = `${provider.issuer}/.well-known/openid-configuration`;
      if (options.json) {
        printJson({
          issuer: provider.issuer,
          discovery,
          confidentialClient: provider.confidentialClient,
          publicClient: provider.publicClient,
          audiences: provider.audiences,
          redirectUris: options.redirectUri,
          address: LOGIN_TEST_ADDRESS,
          env,
          pid: process.pid,
        });
      } else {
        print(`# Local login server (OpenID provider) at ${provider.issuer}: for development only, never production.`);
        print(`# Discovery: ${discovery}. Its login page approves the address it is given`);
        print(`# (default ${LOGIN_TEST_ADDRESS}); the client secret and signing key are new at every start.`);
        print(
          `# The issuer is plain http: pass allowInsecureRequests: true to createLogin for it (this provider only).`,
        );
        print(`# Redirect URIs registered: ${options.redirectUri.join(', ')}.`);
        print(`# A public client (PKCE alone, no secret) is ${provider.publicClient.clientId}.`);
        for (const [name, value] of Object.entries(env)) print(`${options.export ? 'export ' : ''}${name}=${value}`);
        print('# Press Ctrl-C to stop.');
      }
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await provider.stop();
      process.exitCode = EXIT.ok;
    });
}
