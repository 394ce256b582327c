import { Option, type Command } from 'commander';
import { loadDevKeys } from '../dev-keys.js';
import { CliError, EXIT } from '../errors.js';
import { serveJwks } from '../jwks-host.js';
import { parseIntegerInRange, withCommonOptions, type CommonOptions } from '../options.js';
import { print, printJson } from '../output.js';

/**
 * Registers `jwks serve [--port]`: serves the dev JWKS on 127.0.0.1 until interrupted.
 *
 * @example
 * ```ts
 * registerJwks(program) // kyb-webhooks jwks serve
 * ```
 */
export function registerJwks(program: Command): void {
  const jwks = program.command('jwks').description('the development JWKS (the public half of the attestation key)');
  withCommonOptions(
    jwks.command('serve').description('serve the development JWKS on 127.0.0.1 until interrupted (Ctrl-C)'),
  )
    .addOption(
      new Option(
        '--port <port>',
        'port to listen on (default the one in the keys file, which KYB_JWKS_URL names)',
      ).argParser(parseIntegerInRange(1, 65535)),
    )
    .action(async (options: CommonOptions & { port?: number }) => {
      // Serving keys made up now would publish a key no delivery was signed with: serve the existing ones only.
      const { keys, file } = loadDevKeys(options.keys);
      const port = options.port ?? keys.jwksPort;
      let host;
      try {
        host = await serveJwks({ keys: [keys.publicJwk] }, port);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new CliError(
          code === 'EADDRINUSE'
            ? `127.0.0.1:${port} is already in use (another \`jwks serve\`?). Stop that process, or pick another port with --port and give your dev server the matching KYB_JWKS_URL.`
            : `Could not listen on 127.0.0.1:${port} (${code}).`,
        );
      }
      if (options.json) printJson({ url: host.url, kid: keys.kid, keysFile: file, pid: process.pid });
      else {
        print(`Serving the development JWKS (kid ${keys.kid}) at ${host.url}`);
        if (port !== keys.jwksPort)
          print(`Give your dev server KYB_JWKS_URL=${host.url} (the keys file names port ${keys.jwksPort}).`);
        print('Press Ctrl-C to stop.');
      }
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await host.close();
      process.exitCode = EXIT.ok;
    });
}
