import type { Command } from 'commander';
import { apiSettings, callApi, cellText, openClient, withApiOptions, type ApiOptions } from '../api.js';
import { EXIT } from '../errors.js';
import { print, printJson } from '../output.js';

/**
 * Registers `redeliver <request-id>`: asks the service to queue the request's events again (spec 4.2). The spec's
 * redeliver takes no parameter and the client sends none, so there is no `--after-seq`: the whole stream is queued,
 * which is safe (a receiver answers what it processed before `duplicate`). To get only the events after a seq to
 * your receiver, use `recover --request <id> --to <url>`.
 *
 * @example
 * ```ts
 * registerRedeliver(program) // kyb-webhooks redeliver dr_01jd8x2k7q
 * ```
 */
export function registerRedeliver(program: Command): void {
  withApiOptions(
    program
      .command('redeliver')
      .description(
        'ask the KYB service to queue every event of a request again (your receiver answers those it processed "duplicate")',
      )
      .argument('<request-id>', 'the request id (the stream_id of its events)'),
  ).action(async (requestId: string, options: ApiOptions) => {
    process.exitCode = await runRedeliver(requestId, options);
  });
}

/**
 * Runs `redeliver`; returns the exit code.
 *
 * @example
 * ```ts
 * const code = await runRedeliver('dr_01jd8x2k7q', { json: true })
 * ```
 */
export async function runRedeliver(requestId: string, options: ApiOptions): Promise<number> {
  const settings = apiSettings(options);
  const client = openClient(settings);
  // A POST is retried only on the client's opt-in: queuing a stream twice is harmless (dedupe), losing it is not.
  const result = await callApi(settings, () => client.redeliver(requestId, { retry: true }));
  if (options.json) printJson({ request_id: requestId, queued: result.queued ?? null });
  else
    print(
      `\u2713 ${cellText(requestId)}: ${result.queued === undefined ? 'the events were' : `${result.queued} events`} queued again; the service delivers them in seq order (check with kyb-webhooks deliveries ${cellText(requestId)}).`,
    );
  return EXIT.ok;
}
