import type { Command } from 'commander';
import type { DeliveryLogEntry } from '@kyb-webhooks/client';
import { apiSettings, callApi, cellText, openClient, withApiOptions, type ApiOptions } from '../api.js';
import { EXIT } from '../errors.js';
import { formatTable, print, printJson, shownEventType } from '../output.js';

/**
 * One event of a request's delivery log, summarised from its attempts.
 *
 * @example
 * ```ts
 * const row: DeliverySummary = { seq: 2, event_id: '01JH…', event: 'kyb.data_request.released', attempts: 3, last_status: 503, last_error: null, acknowledged: false }
 * ```
 */
export interface DeliverySummary {
  seq: number;
  event_id: string;
  /** The event type as the log names it (`event`, `event_type` or `type`), or null. */
  event: string | null;
  /** Attempts the log lists for the event. */
  attempts: number;
  /** The HTTP status of the latest attempt; null when it got no HTTP answer (or the log does not say). */
  last_status: number | null;
  /** Why the latest attempt got no answer (`timeout`, `network error …`), when the log says. */
  last_error: string | null;
  /** Whether any attempt was answered with a 2xx, as the client judges an entry. */
  acknowledged: boolean;
}

/**
 * Registers `deliveries <request-id>`: what the service delivered of a request, and what the endpoint answered.
 *
 * @example
 * ```ts
 * registerDeliveries(program) // kyb-webhooks deliveries dr_01jd8x2k7q
 * ```
 */
export function registerDeliveries(program: Command): void {
  withApiOptions(
    program
      .command('deliveries')
      .description(
        "the KYB API's delivery log of a request: per event, the attempts, the last answer of your endpoint and whether it was acknowledged",
      )
      .argument('<request-id>', 'the request id (the stream_id of its events)'),
  ).action(async (requestId: string, options: ApiOptions) => {
    process.exitCode = await runDeliveries(requestId, options);
  });
}

/**
 * Runs `deliveries`; returns the exit code (0 whether or not every event was acknowledged: the log is the answer).
 *
 * @example
 * ```ts
 * const code = await runDeliveries('dr_01jd8x2k7q', { json: true })
 * ```
 */
export async function runDeliveries(requestId: string, options: ApiOptions): Promise<number> {
  const settings = apiSettings(options);
  const client = openClient(settings);
  const log = await callApi(settings, () => client.deliveries(requestId));
  const rows = summarizeDeliveries(log);
  const unacknowledged = rows.filter((row) => !row.acknowledged).length;
  if (options.json) {
    printJson({ request_id: requestId, events: rows, unacknowledged, entries: log });
    return EXIT.ok;
  }
  if (rows.length === 0) {
    print(`No delivery attempts logged for ${cellText(requestId)} yet.`);
    return EXIT.ok;
  }
  print(
    formatTable(rows, [
      { heading: 'seq', cell: (row) => String(row.seq) },
      { heading: 'event', cell: (row) => (row.event === null ? '—' : row.event.replace(/^kyb\./, '')) },
      { heading: 'event_id', cell: (row) => cellText(row.event_id) },
      { heading: 'attempts', cell: (row) => String(row.attempts) },
      {
        heading: 'last status',
        cell: (row) => (row.last_status !== null ? String(row.last_status) : cellText(row.last_error ?? 'no answer')),
      },
      { heading: 'acknowledged', cell: (row) => (row.acknowledged ? 'yes' : 'no') },
    ]),
  );
  print(
    unacknowledged === 0
      ? `\u2713 every logged event was acknowledged (${rows.length}).`
      : `\u2717 ${unacknowledged} of ${rows.length} logged events never acknowledged: recover them with kyb-webhooks recover --request ${cellText(requestId)} --to <your webhook URL>.`,
  );
  return EXIT.ok;
}

/**
 * Groups a delivery log by event: one row per event_id, in seq order, with its attempt count, its latest attempt's
 * answer (latest by the `attempt` number when every entry has one, else the last listed, whichever order the
 * service lists them) and whether any attempt was acknowledged.
 *
 * @example
 * ```ts
 * summarizeDeliveries(await client.deliveries(requestId)).filter((row) => !row.acknowledged)
 * ```
 */
export function summarizeDeliveries(log: readonly DeliveryLogEntry[]): DeliverySummary[] {
  const byEvent = new Map<string, DeliveryLogEntry[]>();
  for (const entry of log) {
    const entries = byEvent.get(entry.event_id);
    if (entries) entries.push(entry);
    else byEvent.set(entry.event_id, [entry]);
  }
  const rows: DeliverySummary[] = [];
  for (const [eventId, entries] of byEvent) {
    // A synthetic "not attempted yet" record (attempt: null) is no attempt.
    const attempts = entries.filter((entry) => entry.attempt !== null);
    const numbered = attempts.every((entry) => Number.isInteger(Number(entry.attempt)) && entry.attempt !== undefined);
    const latest = numbered
      ? attempts.reduce<DeliveryLogEntry | undefined>(
          (best, entry) => (best === undefined || Number(entry.attempt) >= Number(best.attempt) ? entry : best),
          undefined,
        )
      : attempts.at(-1);
    const type = entries.map(eventTypeOf).find((value) => value !== undefined);
    rows.push({
      seq: entries[0]!.seq,
      event_id: eventId,
      event: type ?? null,
      attempts: attempts.length,
      last_status: latest === undefined ? null : statusOf(latest),
      last_error: latest === undefined ? 'not attempted yet' : errorOf(latest),
      acknowledged: entries.some((entry) => entry.acknowledged),
    });
  }
  return rows.sort((a, b) => a.seq - b.seq);
}

function eventTypeOf(entry: DeliveryLogEntry): string | undefined {
  for (const name of ['event', 'event_type', 'type']) {
    const value = entry[name];
    if (typeof value === 'string') {
      const shown = shownEventType(value);
      return shown.startsWith('(') ? undefined : shown;
    }
  }
  return undefined;
}

function statusOf(entry: DeliveryLogEntry): number | null {
  for (const name of ['status', 'status_code', 'http_status', 'response_status']) {
    const value = entry[name];
    const number = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
    if (typeof number === 'number' && Number.isInteger(number) && number >= 100 && number <= 599) return number;
  }
  return null;
}

function errorOf(entry: DeliveryLogEntry): string | null {
  const value = entry.error;
  return typeof value === 'string' && value !== '' ? value.slice(0, 120) : null;
}
