import { Option, type Command } from 'commander';
import { jwksUrl, loadOrCreateDevKeys, type DevKeys } from '../dev-keys.js';
import { EXIT } from '../errors.js';
import { parseIntegerInRange, withCommonOptions, type CommonOptions } from '../options.js';
import { print, printJson } from '../output.js';

/**
 * The environment a dev server needs to accept what the CLI sends: the variables the example apps read
 * (examples/shared/src/config.ts), one `KYB_SECRET_V<kv>` per secret version.
 *
 * @example
 * ```ts
 * devServerEnv(keys).KYB_JWKS_URL // 'http://127.0.0.1:4479/.well-known/kyb-jwks.json'
 * ```
 */
export function devServerEnv(keys: DevKeys): Record<string, string> {
  const env: Record<string, string> = {};
  for (const version of Object.keys(keys.secrets).sort((a, b) => Number(a) - Number(b)))
    env[`KYB_SECRET_V${version}`] = keys.secrets[version] as string;
  env.KYB_ATTESTATION_ISSUER = keys.issuer;
  env.KYB_AUDIENCE = keys.audience;
  env.KYB_JWKS_URL = jwksUrl(keys);
  return env;
}

/**
 * Registers `keys`: prints the env vars to paste (the only command that prints secrets: that is its job).
 *
 * @example
 * ```ts
 * registerKeys(program) // kyb-webhooks keys --export >> .env.development
 * ```
 */
export function registerKeys(program: Command): void {
  withCommonOptions(
    program
      .command('keys')
      .description(
        'print the environment variables that make your dev server accept what this CLI sends (creates the keys file on first use)',
      ),
  )
    .option('--export', 'prefix each line with "export " for a shell')
    .addOption(
      new Option('--jwks-port <port>', 'port of the JWKS URL, when the keys file is created now').argParser(
        parseIntegerInRange(1, 65535),
      ),
    )
    .action((options: CommonOptions & { export?: boolean; jwksPort?: number }) => {
      const { keys, file, created } = loadOrCreateDevKeys(
        options.keys,
        options.jwksPort === undefined ? {} : { jwksPort: options.jwksPort },
      );
      if (!created && options.jwksPort !== undefined && options.jwksPort !== keys.jwksPort) {
        process.stderr.write(
          `note: ${file} already exists with JWKS port ${keys.jwksPort}; --jwks-port applies only when keys are created.\n`,
        );
      }
      const env = devServerEnv(keys);
      if (options.json) {
        printJson({
          keysFile: file,
          created,
          kid: keys.kid,
          currentVersion: keys.currentVersion,
          previousVersion: keys.previousVersion,
          env,
        });
      } else {
        print(
          `# kyb-webhooks development keys from ${file}${created ? ' (just created)' : ''}. Never use them in production.`,
        );
        print(
          `# Version ${keys.currentVersion} is current; version ${keys.previousVersion} is the previous secret of a rotation overlap`,
        );
        print(
          `# (the secret-rotation scenario needs both; remove KYB_SECRET_V${keys.previousVersion} to end the overlap).`,
        );
        print(
          `# The JWKS is served at KYB_JWKS_URL by \`kyb-webhooks jwks serve\`, or by send/scenario while they run.`,
        );
        for (const [name, value] of Object.entries(env)) print(`${options.export ? 'export ' : ''}${name}=${value}`);
      }
      process.exitCode = EXIT.ok;
    });
}
