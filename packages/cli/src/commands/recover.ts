import { InvalidArgumentError, Option, type Command } from 'commander';
import { EVENT_NOT_SERVED, recover, type RecoverReport, type StreamRecovery } from '@kyb-webhooks/client';
import {
  apiSettings,
  callApi,
  cellText,
  fixForApiError,
  openClient,
  redact,
  timeMs,
  withApiOptions,
  type ApiOptions,
} from '../api.js';
import { fixFor, routeHint } from '../codes.js';
import { EXIT, usageError } from '../errors.js';
import { MAX_TIMEOUT_MS, displayUrl, parseIntegerInRange, parseUrl } from '../options.js';
import { createProgress, formatTable, print, printJson } from '../output.js';
import { ATTESTATION_EXPIRED, createRemoteReceiver, signingSecret, type RemoteReceiver } from '../remote-receiver.js';

/**
 * Options of `recover`.
 *
 * @example
 * ```ts
 * const options: RecoverCommandOptions = { request: ['dr_01jd8x2k7q'], to: 'https://app.example.com/webhooks/kyb', timeout: 10_000, reactivate: true }
 * ```
 */
export interface RecoverCommandOptions extends ApiOptions {
  request?: string[];
  /** Unix milliseconds, from `--since`. */
  since?: number;
  to: string;
  timeout: number;
  secretVersion?: string;
  /** False with `--no-reactivate`. */
  reactivate: boolean;
}

/**
 * Registers `recover (--request <id>… [--since <time>]) --to <url>`: replays the events a quarantine or an outage
 * kept from your receiver, from the KYB API into your own webhook URL, then reactivates the endpoint.
 *
 * @example
 * ```ts
 * registerRecover(program) // kyb-webhooks recover --request dr_01jd8x2k7q --to https://app.example.com/webhooks/kyb
 * ```
 */
export function registerRecover(program: Command): void {
  withApiOptions(
    program
      .command('recover')
      .description(
        'replay the events your receiver missed (delivery log → events API) into your own webhook URL, in seq order per stream, signed with your webhook secret (KYB_SECRET_V<n>), then reactivate the endpoint so the service delivers its backlog',
      ),
  )
    .option(
      '--request <id...>',
      'the requests (stream ids) to recover; repeatable. Required: the KYB API has no call that lists requests',
    )
    .addOption(
      new Option(
        '--since <time>',
        'of the --request ids, only those with a delivery the endpoint did not acknowledge since then: an ISO date (2026-01-31T08:00:00Z) or a duration ago (90m, 12h, 7d)',
      ).argParser(parseSince),
    )
    .requiredOption(
      '--to <url>',
      'your webhook endpoint, where the service delivers, e.g. https://app.example.com/webhooks/kyb',
      parseUrl,
    )
    .option(
      '--secret-version <kv>',
      'sign with KYB_SECRET_V<kv> (default the highest version set, the one the service signs with)',
    )
    .addOption(
      new Option('--timeout <ms>', 'timeout of one POST to your endpoint, in milliseconds')
        .default(10_000)
        .argParser(parseIntegerInRange(1, MAX_TIMEOUT_MS)),
    )
    .option('--no-reactivate', 'leave the endpoint quarantined after the replay (default: reactivate it)')
    .action(async (options: RecoverCommandOptions) => {
      process.exitCode = await runRecover(options);
    });
}

/**
 * Commander parser for `--since`: an ISO date, or a duration ago (`90m`, `12h`, `7d`); Unix milliseconds.
 *
 * @example
 * ```ts
 * parseSince('2026-01-31T08:00:00Z') // 1769846400000
 * parseSince('12h') // Date.now() - 12 h
 * ```
 */
export function parseSince(value: string, now: number = Date.now()): number {
  const duration = /^(\d{1,6})([mhd])$/.exec(value.trim());
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd'];
    return now - Number(duration[1]) * unit;
  }
  // A bare number would be ambiguous (seconds? milliseconds? a year?): dates only, with a month.
  const parsed = /^\d{4}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(parsed))
    throw new InvalidArgumentError(
      'expected an ISO date such as 2026-01-31T08:00:00Z, or a duration ago: 90m, 12h, 7d',
    );
  return parsed;
}

/**
 * Runs `recover`; returns the exit code: 0 when every replayed event was processed (or was a duplicate) and the
 * endpoint was reactivated (unless `--no-reactivate`), 1 otherwise, 2 for usage errors (nothing was sent).
 *
 * @example
 * ```ts
 * const code = await runRecover({ request: ['dr_01jd8x2k7q'], to, timeout: 10_000, reactivate: true })
 * ```
 */
export async function runRecover(
  options: RecoverCommandOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const requested = [...new Set(options.request ?? [])];
  if (requested.length === 0) {
    throw usageError(
      options.since === undefined
        ? 'say which streams to recover: --request <request-id> (repeatable).'
        : '--since needs --request <id>…: the KYB API has no call that lists requests (spec 4.2), and this command has no access to your receiver\u2019s store, so it cannot find streams by time alone. Give the ids of the requests that may have missed events (e.g. every open request in your database); --since then keeps those whose delivery log shows an unacknowledged delivery since the time. In your own code, recover({ store, since }) from @kyb-webhooks/client finds them in the store.',
    );
  }
  const settings = apiSettings(options, env);
  const { version, secret } = signingSecret(env, options.secretVersion);
  const client = openClient(settings);
  const receiver = await createRemoteReceiver({ url: options.to, secret, version, timeoutMs: options.timeout });
  const to = displayUrl(options.to);

  let requestIds = requested;
  const notSelected: string[] = [];
  if (options.since !== undefined) {
    const since = options.since;
    requestIds = [];
    for (const requestId of requested) {
      const log = await callApi(settings, () => client.deliveries(requestId));
      // An entry without a readable time counts: better one stream replayed (answered duplicate) than one missed.
      const missed = log.some((entry) => {
        if (entry.acknowledged) return false;
        const at = timeMs(entry.attempted_at ?? entry.created_at ?? entry.timestamp);
        return at === undefined || at >= since;
      });
      if (missed) requestIds.push(requestId);
      else notSelected.push(requestId);
    }
  }

  const progress = createProgress(requestIds.length, options.json === true);
  let report: RecoverReport;
  try {
    report = await recover(
      { client, receiver, requestIds },
      {
        reactivate: options.reactivate,
        onProgress: (update) => {
          if (update.kind === 'stream_started') progress.update(`${update.requestId ?? ''}: replaying`);
        },
      },
    );
  } finally {
    progress.done();
  }

  const streams = report.streams.map((stream) => describeStream(stream, receiver, settings.apiKey));
  if (options.json) {
    printJson({
      ok: report.ok,
      to,
      secret_version: version,
      since: options.since === undefined ? null : new Date(options.since).toISOString(),
      streams,
      not_selected: notSelected,
      totals: report.totals,
      reactivated:
        typeof report.reactivated === 'boolean'
          ? report.reactivated
          : redactFailure(report.reactivated, settings.apiKey),
    });
    return report.ok ? EXIT.ok : EXIT.failed;
  }

  if (streams.length > 0) {
    print(
      formatTable(streams, [
        { heading: 'request', cell: (stream) => cellText(stream.request_id) },
        { heading: 'events', cell: (stream) => String(stream.events) },
        { heading: 'processed', cell: (stream) => String(stream.processed) },
        { heading: 'duplicate', cell: (stream) => String(stream.duplicate) },
        { heading: 'failed', cell: (stream) => String(stream.failed) },
        { heading: 'held', cell: (stream) => String(stream.held) },
        { heading: 'last seq', cell: (stream) => (stream.last_seq === null ? '—' : String(stream.last_seq)) },
      ]),
    );
  }
  for (const requestId of notSelected)
    print(`${cellText(requestId)}: not replayed: its delivery log shows no unacknowledged delivery since --since.`);
  for (const stream of streams) {
    for (const failure of stream.failures) {
      const { what, fix } = failureText(failure, stream.request_id, to, version);
      print(
        `\u2717 ${cellText(stream.request_id)} seq ${failure.seq} (${failure.event_id}): ${what}${fix === '' ? '' : `: ${fix}`}`,
      );
    }
    if (stream.held > 0)
      print(
        `  ${cellText(stream.request_id)}: ${stream.held} later events held back (not sent), so your receiver never gets them out of order; run recover again once the failure is fixed.`,
      );
    if (stream.error) {
      const fix = fixForApiError(stream.error.code, stream.error.status);
      print(
        `\u2717 ${cellText(stream.request_id)}: KYB API error ${stream.error.code} (${stream.error.status === null ? 'no HTTP answer' : `HTTP ${stream.error.status}`}): ${stream.error.message}${fix === '' ? '' : `\n  fix: ${fix}`}`,
      );
    }
  }
  if (report.reactivated === true)
    print(
      '\u2713 endpoint reactivated: the KYB service now delivers its backlog (what was replayed is answered duplicate).',
    );
  else if (report.reactivated === false)
    print('endpoint not reactivated (--no-reactivate): run kyb-webhooks reactivate when ready.');
  else {
    const failure = redactFailure(report.reactivated, settings.apiKey);
    const fix = fixForApiError(failure.code, failure.status);
    print(
      `\u2717 reactivate failed: KYB API error ${failure.code} (${failure.status === null ? 'no HTTP answer' : `HTTP ${failure.status}`})${fix === '' ? '' : `\n  fix: ${fix}`}`,
    );
  }
  const totals = report.totals;
  print(
    report.ok
      ? `\u2713 recovered ${streams.length} streams: ${totals.processed} processed, ${totals.duplicate} duplicate.`
      : `\u2717 not fully recovered: ${totals.failed} failed, ${totals.held} held, ${streams.filter((stream) => stream.error).length} stream errors.`,
  );
  return report.ok ? EXIT.ok : EXIT.failed;
}

/**
 * One stream of the `recover` report as the CLI prints it (`--json` too).
 *
 * @example
 * ```ts
 * const row: RecoveredStream = { request_id: 'dr_1', events: 3, replayed: 3, processed: 2, duplicate: 1, failed: 0, held: 0, skipped: 0, unacknowledged: 2, after_seq: 0, last_seq: 3, failures: [] }
 * ```
 */
export interface RecoveredStream {
  request_id: string;
  /** The stream's events after `after_seq`: replayed plus held. */
  events: number;
  replayed: number;
  processed: number;
  duplicate: number;
  failed: number;
  held: number;
  skipped: number;
  /** Events the delivery log shows without a 2xx. */
  unacknowledged: number;
  /** The seq replay started after; null when the stream failed before (see `error`). */
  after_seq: number | null;
  /** The highest seq your receiver acknowledged during this run; null when none. */
  last_seq: number | null;
  /** Events your receiver did not accept: its status (null: no answer, see `error`) and the code it answered. */
  failures: { event_id: string; seq: number; status: number | null; code: string | null; error?: string }[];
  error?: { code: string; status: number | null; message: string };
}

function describeStream(stream: StreamRecovery, receiver: RemoteReceiver, apiKey: string): RecoveredStream {
  const described: RecoveredStream = {
    request_id: stream.requestId,
    events: stream.replayed + stream.held,
    replayed: stream.replayed,
    processed: stream.processed + stream.late,
    duplicate: stream.duplicate,
    failed: stream.failed,
    held: stream.held,
    skipped: stream.skipped,
    unacknowledged: stream.unacknowledged,
    after_seq: stream.afterSeq ?? null,
    last_seq: receiver.lastAcknowledged.get(stream.requestId) ?? null,
    failures: stream.failures
      .filter((failure) => !failure.skipped)
      .map((failure) => {
        const answer = receiver.answers.get(failure.eventId);
        return {
          event_id: failure.eventId,
          seq: failure.seq,
          status: answer?.status ?? (failure.status === 0 ? null : failure.status),
          // The receiver's own code; null when it answered none (recover() calls that `failed`).
          code: answer === undefined ? failure.code : (answer.code ?? (answer.status === null ? failure.code : null)),
          ...(answer?.error === undefined ? {} : { error: answer.error }),
        };
      }),
  };
  if (stream.error) described.error = redactFailure(stream.error, apiKey);
  return described;
}

/**
 * What happened to one failed event, and what to do about it, for the table's reader.
 *
 * @example
 * ```ts
 * failureText({ event_id: '01J…', seq: 1, status: 500, code: 'handler_failed' }, 'dr_1', url, '1').what // 'your receiver answered 500 handler_failed'
 * ```
 */
export function failureText(
  failure: RecoveredStream['failures'][number],
  requestId: string,
  to: string,
  version: string,
): { what: string; fix: string } {
  if (failure.code === EVENT_NOT_SERVED) {
    return {
      what: 'the delivery log shows it unacknowledged, but the KYB API did not serve it with the stream\u2019s events',
      fix: `ask the service to send it again (kyb-webhooks redeliver ${cellText(requestId)}), or its support`,
    };
  }
  if (failure.code === ATTESTATION_EXPIRED) {
    return {
      what: `${failure.error ?? 'not sent: its attestation has expired'}, so your receiver would refuse it (spec 5.5)`,
      fix:
        'replay it in your app with recover() of @kyb-webhooks/client, whose receiver.replay takes a fetched ' +
        `event's expired attestation, or have the service send it again (kyb-webhooks redeliver ${cellText(requestId)})`,
    };
  }
  if (failure.status === null)
    return {
      what: `your receiver gave no answer (${failure.error ?? 'network error'})`,
      fix: `is it running at ${to}?`,
    };
  const what = `your receiver answered ${failure.status}${failure.code === null ? '' : ` ${failure.code}`}`;
  if (failure.code === null) return { what, fix: routeHint({ status: failure.status }, to) ?? '' };
  return { what, fix: fixFor(failure.code, { 'service-kyb-signature': `t=0,v1=0,kv=${version}` }) };
}

function redactFailure(
  failure: { code: string; status: number | null; message: string },
  apiKey: string,
): { code: string; status: number | null; message: string } {
  return { ...failure, message: redact(failure.message, apiKey) };
}
