import type { Command } from 'commander';
import { apiSettings, callApi, openClient, withApiOptions, type ApiOptions } from '../api.js';
import { EXIT } from '../errors.js';
import { print, printJson } from '../output.js';

/**
 * Registers `reactivate`: clears the quarantine of the webhook endpoint; the service then delivers its backlog.
 *
 * @example
 * ```ts
 * registerReactivate(program) // kyb-webhooks reactivate
 * ```
 */
export function registerReactivate(program: Command): void {
  withApiOptions(
    program
      .command('reactivate')
      .description('clear the quarantine of your webhook endpoint; the KYB service then delivers the held backlog'),
  ).action(async (options: ApiOptions) => {
    process.exitCode = await runReactivate(options);
  });
}

/**
 * Runs `reactivate`; returns the exit code (1 when the service says the endpoint was not reactivated).
 *
 * @example
 * ```ts
 * const code = await runReactivate({ json: true })
 * ```
 */
export async function runReactivate(options: ApiOptions): Promise<number> {
  const settings = apiSettings(options);
  const client = openClient(settings);
  const result = await callApi(settings, () => client.reactivate({ retry: true }));
  if (options.json) printJson({ reactivated: result.reactivated });
  else if (result.reactivated)
    print('\u2713 endpoint reactivated: the KYB service now delivers the backlog it held, in seq order per stream.');
  else print('\u2717 the KYB service answered that the endpoint was not reactivated.');
  return result.reactivated ? EXIT.ok : EXIT.failed;
}
