import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { registerDeliveries } from './commands/deliveries.js';
import { registerEvents } from './commands/events.js';
import { registerJwks } from './commands/jwks.js';
import { registerKeys } from './commands/keys.js';
import { registerLoginServer } from './commands/login-server.js';
import { registerReactivate } from './commands/reactivate.js';
import { registerRecover } from './commands/recover.js';
import { registerRedeliver } from './commands/redeliver.js';
import { registerRelease } from './commands/release.js';
import { registerReplay } from './commands/replay.js';
import { registerScenario } from './commands/scenario.js';
import { registerSend } from './commands/send.js';
import { registerVerify } from './commands/verify.js';
import { CliError, EXIT } from './errors.js';

// src/program.ts and the bundled dist/cli.js both sit one level below the package root.
const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * The `kyb-webhooks` program with every command registered. Commander's own exits are turned into throws, so
 * {@link runCli} decides the exit code (2 for usage errors).
 *
 * @example
 * ```ts
 * await createProgram().parseAsync(['node', 'kyb-webhooks', 'keys'])
 * ```
 */
export function createProgram(): Command {
  const program = new Command('kyb-webhooks')
    .description(
      'Send realistic signed KYB webhook deliveries and scenarios to your dev server, serve the development JWKS, verify and replay captured deliveries; operate the real integration over the KYB API (deliveries, events, release, redeliver, reactivate, recover).',
    )
    .version(version)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addHelpText(
    'after',
    '\nExit codes: 0 ok, 1 a check or expectation failed (or the app could not be reached), 2 usage error.\nThe API commands (deliveries, events, release, redeliver, reactivate, recover) exit 1 when a KYB API call or a recovered event failed; they read KYB_API_KEY and KYB_BASE_URL.\nStart with: kyb-webhooks keys   (paste its output into your dev server\u2019s environment)',
  );
  registerKeys(program);
  registerJwks(program);
  registerLoginServer(program);
  registerSend(program);
  registerScenario(program);
  registerVerify(program);
  registerReplay(program);
  // The real integration, over the KYB API (KYB_API_KEY, KYB_BASE_URL).
  registerDeliveries(program);
  registerEvents(program);
  registerRelease(program);
  registerRedeliver(program);
  registerReactivate(program);
  registerRecover(program);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/**
 * Runs the CLI on `argv` and returns the exit code: commander errors are usage errors (2), {@link CliError}s carry
 * their own code, anything else is 1. Only messages are printed, never stacks or values.
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv)
 * ```
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successful exits; everything else commander rejects is a usage error it already printed.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof CliError) {
      process.stderr.write(`kyb-webhooks: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(
      `kyb-webhooks: unexpected ${error instanceof Error ? error.name : 'error'}: ${error instanceof Error ? error.message : 'unknown'}\n`,
    );
    return EXIT.failed;
  }
}
