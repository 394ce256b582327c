import { Option, type Command } from 'commander';
import type { StreamEvent } from '@kyb-webhooks/client';
import { apiSettings, callApi, cellText, isoTime, openClient, withApiOptions, type ApiOptions } from '../api.js';
import { EXIT } from '../errors.js';
import { parseIntegerAtLeast } from '../options.js';
import { formatTable, print, printJson } from '../output.js';

/**
 * Options of `events`.
 *
 * @example
 * ```ts
 * const options: EventsCommandOptions = { afterSeq: 3, json: true }
 * ```
 */
export interface EventsCommandOptions extends ApiOptions {
  afterSeq?: number;
}

/**
 * Registers `events <request-id> [--after-seq N]`: the request's event stream as the API serves it.
 *
 * @example
 * ```ts
 * registerEvents(program) // kyb-webhooks events dr_01jd8x2k7q --after-seq 3
 * ```
 */
export function registerEvents(program: Command): void {
  withApiOptions(
    program
      .command('events')
      .description("the request's event stream from the KYB API (every page), in seq order")
      .argument('<request-id>', 'the request id (the stream_id of its events)'),
  )
    .addOption(
      new Option('--after-seq <n>', 'only the events after this seq (default: the whole stream)').argParser(
        parseIntegerAtLeast(-1),
      ),
    )
    .action(async (requestId: string, options: EventsCommandOptions) => {
      process.exitCode = await runEvents(requestId, options);
    });
}

/**
 * Runs `events`; returns the exit code. `--json` prints the events as the API served them, except that each
 * attestation is replaced by `attested: true` (a release's attestation carries the released answers, which only
 * `release` prints).
 *
 * @example
 * ```ts
 * const code = await runEvents('dr_01jd8x2k7q', { afterSeq: 3 })
 * ```
 */
export async function runEvents(requestId: string, options: EventsCommandOptions): Promise<number> {
  const settings = apiSettings(options);
  const client = openClient(settings);
  const events = await callApi(settings, async () => {
    const collected: StreamEvent[] = [];
    for await (const event of client.events(requestId, { afterSeq: options.afterSeq ?? -1 })) collected.push(event);
    return collected;
  });
  if (options.json) {
    // An attestation is left out: a release's carries the released answers, which only `release` prints.
    const shown = events.map(({ attestation, ...event }) => ({ ...event, attested: attestation !== undefined }));
    printJson({ request_id: requestId, after_seq: options.afterSeq ?? null, events: shown });
    return EXIT.ok;
  }
  if (events.length === 0) {
    print(
      `No events of ${cellText(requestId)}${options.afterSeq === undefined ? '' : ` after seq ${options.afterSeq}`}.`,
    );
    return EXIT.ok;
  }
  print(
    formatTable(events, [
      { heading: 'seq', cell: (event) => String(event.seq) },
      { heading: 'event_id', cell: (event) => cellText(event.event_id) },
      { heading: 'type', cell: (event) => cellText(event.event) },
      { heading: 'created', cell: (event) => isoTime(event.timestamp) },
      { heading: 'attested', cell: (event) => (event.attestation === undefined ? 'no' : 'yes') },
    ]),
  );
  return EXIT.ok;
}
