import { KybWebhookError, type Receiver, type ReceiveResult, type StreamCursorStore } from '@kyb-webhooks/core';
import type { KybClient } from './client.js';
import { isKybApiError } from './errors.js';
import type { DeliveryLogEntry } from './parse.js';
import { checkOptions, checkTarget } from './recover-arguments.js';
import { StreamReplay } from './recover-stream.js';

export { DEFAULT_PROGRESS_EVERY } from './recover-arguments.js';

/**
 * What {@link recover} works on: the client, the receiver, and which streams. Name streams with `requestIds`, or let
 * `since` find every stream whose cursor the store saw written since then (that needs `store`, the receiver's store,
 * which lists them), so reach `since` back to before the last event processed on any stream that may have had
 * events since, not to the start of an outage. Both together: the union. A stream the receiver never completed an
 * event of has no cursor, so `since` cannot find it: name it in `requestIds` (the events of such streams that are
 * still queued by a quarantine are delivered by the service after the reactivation anyway).
 *
 * @example
 * ```ts
 * const target: RecoverTarget = { client, receiver, store, since: Date.now() - 30 * 24 * 3_600_000 }
 * ```
 */
export interface RecoverTarget {
  client: Pick<KybClient, 'deliveries' | 'events' | 'reactivate'>;
  /** The receiver that processes your webhooks, handlers registered: recovery replays events through it. */
  receiver: RecoverReceiver;
  /**
   * The receiver's store. Needed with `since` (it lists the active streams); with ordering on it also gives each
   * stream's cursor, where replay starts. Without it, replay starts from the delivery log alone.
   */
  store?: StreamCursorStore;
  /** Recover the streams active since this time (a Date or Unix ms). Needs `store`. */
  since?: Date | number;
  /** Recover these requests (stream ids). */
  requestIds?: readonly string[];
}

/**
 * The receiver {@link recover} replays through: a receiver of `createReceiver`, or anything with its `replay` and
 * `orderingMode`.
 *
 * @example
 * ```ts
 * const target: RecoverTarget = { client, receiver: createReceiver({ secrets, store, ordering }), requestIds: ['dr_1'] }
 * ```
 */
export interface RecoverReceiver extends Pick<Receiver, 'replay' | 'orderingMode'> {
  /**
   * Whether the receiver's `ordering.onUnfillable` may skip an event that fails its own attestation, so that, under
   * enforce, the next event's success proves the skip: recovery then tries that next event once (see
   * {@link RecoverFailure.skipped}). Left out: true, as for a receiver of `createReceiver`. A receiver that posts to
   * another process (the CLI's `recover` posting to your endpoint) cannot know what that endpoint's ordering did, so
   * it says false, and under enforce the stream stops at its first failing event.
   */
  readonly skipsUnfillable?: boolean;
}

/**
 * Options of {@link recover}.
 *
 * @example
 * ```ts
 * const options: RecoverOptions = { onProgress: (p) => console.log(p.kind, p.requestId, p.totals.processed), progressEvery: 500 }
 * ```
 */
export interface RecoverOptions {
  /** Called when a stream starts and ends, and every `progressEvery` replayed events within a stream. Not awaited. */
  onProgress?: (progress: RecoverProgress) => void;
  /** Replayed events between two `events` progress reports of a long stream. Default {@link DEFAULT_PROGRESS_EVERY}. */
  progressEvery?: number;
  /** Aborts the recovery: the call rejects with the signal's reason; what was replayed stays done (dedupe). */
  signal?: AbortSignal;
  /**
   * Streams recovered at the same time. Default 1: one after the other, gentle on the API and on your handlers.
   * Events of one stream are always replayed one at a time, in seq order.
   */
  concurrency?: number;
  /**
   * POST reactivate once the streams are replayed, so the service delivers its held backlog (now answered
   * `duplicate` for what was replayed). Default true; false leaves the endpoint as it is.
   */
  reactivate?: boolean;
}

/**
 * Counts of a recovery, per stream and in total.
 *
 * @example
 * ```ts
 * const { processed, duplicate, failed }: RecoverCounts = report.totals
 * ```
 */
export interface RecoverCounts {
  /** Events replayed, whatever came of them. */
  replayed: number;
  /** Replayed and run by the handlers now. */
  processed: number;
  /** Replayed and answered `duplicate`: processed before (by a delivery, a backfill or an earlier recovery). */
  duplicate: number;
  /** Replayed and taken by the `onGap` handlers as late (ordering enforce). */
  late: number;
  /** Replayed and still failing (see `failures`). */
  failed: number;
  /**
   * Replayed, refused because the API can no longer serve it verifiably (see {@link RecoverFailure.permanent}), and
   * then skipped by the receiver's `ordering.onUnfillable` (recorded in the store with its reason): the stream went on.
   */
  skipped: number;
  /**
   * Not replayed, under ordering enforce, because an earlier event of their stream still fails: the receiver would
   * refuse them out of order. They run once that event succeeds (a later recovery, or the service's next delivery).
   */
  held: number;
  /** Events the delivery log shows without any 2xx attempt. */
  unacknowledged: number;
}

/**
 * An event that recovery could not get processed.
 *
 * @example
 * ```ts
 * for (const f of report.streams.flatMap((s) => s.failures)) console.warn(f.eventId, f.seq, f.code)
 * ```
 */
export interface RecoverFailure {
  eventId: string;
  seq: number;
  /**
   * The receiver's code: `handler_failed`, `handler_timeout`, `in_progress`, `attestation_invalid`, …; or
   * `event_not_served` when the delivery log shows the event unacknowledged and the events API did not serve it
   * (the service left it out of the stream: ask its support, or `redeliver` the request).
   */
  code: string;
  /** The receiver's status; 0 when there was none (`event_not_served`, or a remote endpoint that did not answer). */
  status: number;
  /**
   * True when the stream is stalled for good at this event under ordering enforce: the API can never serve an event
   * before it in a verifiable form again (`backfill_unfillable`: purged and served without its attestation, signed by
   * a retired key, gone). Retrying will not help: decide with `ordering.onUnfillable` (README, Ordering).
   */
  permanent?: true;
  /** True when the receiver's `ordering.onUnfillable` skipped this event (its failure counts in `skipped`). */
  skipped?: true;
}

/**
 * What recovery did for one stream.
 *
 * @example
 * ```ts
 * const stream: StreamRecovery = report.streams[0]
 * if (stream.error) console.warn(stream.requestId, stream.error.code)
 * ```
 */
export interface StreamRecovery extends RecoverCounts {
  requestId: string;
  /** The seq replay started after (events with a higher seq were replayed); undefined when the stream failed first. */
  afterSeq: number | undefined;
  failures: RecoverFailure[];
  /** Why the stream could not be (fully) recovered: an API or store failure. The other streams went on. */
  error?: { code: string; status: number | null; message: string };
}

/**
 * The report of {@link recover}.
 *
 * @example
 * ```ts
 * const report: RecoverReport = await recover({ client, receiver, requestIds })
 * if (!report.ok) alert(`${report.totals.failed} events still failing`)
 * ```
 */
export interface RecoverReport {
  /**
   * True when nothing failed: every replayed event processed, duplicate, late or skipped by `ordering.onUnfillable`;
   * nothing held; no stream error (every delivery log read whole); reactivated if asked.
   */
  ok: boolean;
  streams: StreamRecovery[];
  totals: RecoverCounts;
  /**
   * The reactivation: `true` done, `false` not asked (`reactivate: false`), or the API's failure. Done after the
   * replay, so the service's backlog arrives once the receiver holds it all.
   */
  reactivated: boolean | { code: string; status: number | null; message: string };
}

/**
 * A progress report of {@link recover}.
 * - `streams_found`: the streams to recover are known (`streamCount`);
 * - `stream_started`, `stream_done`: per stream (`stream` holds its counts so far);
 * - `events`: every `progressEvery` replayed events of a long stream.
 *
 * @example
 * ```ts
 * const onProgress = (p: RecoverProgress) => console.log(`${p.streamIndex + 1}/${p.streamCount} ${p.kind}`, p.totals.replayed)
 * ```
 */
export interface RecoverProgress {
  kind: 'streams_found' | 'stream_started' | 'events' | 'stream_done';
  streamCount: number;
  /** Index of the current stream (0-based); -1 for `streams_found`. */
  streamIndex: number;
  requestId?: string;
  stream?: Readonly<StreamRecovery>;
  totals: Readonly<RecoverCounts>;
}

/** How long an `in_progress` answer (the same event running elsewhere right now) is waited out, in all. */
const IN_PROGRESS_WAITS_MS = [50, 100, 200, 400, 800, 1600];

/**
 * Recovery in one call (issue 12 §3): for each stream, read the delivery log for the events never acknowledged, replay
 * the stream through `receiver.replay` from where it is needed (after the stream's cursor with ordering on, else after
 * the seq before the first unacknowledged event; after the last acknowledged one when every logged event was), then
 * reactivate the endpoint. Dedupe makes it idempotent: what was processed before is answered `duplicate`, so running
 * it twice is safe and the second run reports everything duplicate.
 *
 * Streams are recovered one after the other (or `concurrency` at a time); an API or store failure of one stream is
 * reported in its entry and the others go on (a failure to list the streams for `since` rejects the call). Under
 * ordering enforce a stream stops at its first still-failing event (the rest are `held`); with ordering off every
 * event is tried. An event answered `in_progress` (being delivered right now) is retried for about 3 s before it
 * counts as failed.
 *
 * @example
 * ```ts
 * import { createKybClient, recover } from '@kyb-webhooks/client'
 *
 * // `since` finds streams by the time their cursor was last written, and a receiver that was down wrote none: reach
 * // back to before the last event processed on any stream that may have had events since (here, 30 days, the age of
 * // the oldest open request), not to the start of the outage.
 * const report = await recover(
 *   { client, receiver, store, since: Date.now() - 30 * 24 * 3_600_000 },
 *   { onProgress: (p) => log.info(p.kind, p.requestId, p.totals) },
 * )
 * if (!report.ok) for (const s of report.streams) for (const f of s.failures) log.warn(s.requestId, f.seq, f.code)
 * ```
 */
export async function recover(target: RecoverTarget, options?: RecoverOptions): Promise<RecoverReport> {
  const { client, receiver, store } = checkTarget(target);
  const { progressEvery, concurrency, reactivate, signal, onProgress } = checkOptions(options);
  signal?.throwIfAborted();
  const call = signal ? { signal } : {};
  const totals = emptyCounts();
  const progress = (update: Omit<RecoverProgress, 'totals'>) => {
    if (!onProgress) return;
    try {
      onProgress({ ...update, totals: { ...totals } });
    } catch {
      // A progress callback that throws must not stop a recovery.
    }
  };

  const requestIds = await findStreams(target, store, signal);
  const streams: StreamRecovery[] = requestIds.map((requestId) => ({
    requestId,
    afterSeq: undefined,
    failures: [],
    ...emptyCounts(),
  }));
  progress({ kind: 'streams_found', streamCount: requestIds.length, streamIndex: -1 });

  async function recoverStream(streamIndex: number): Promise<void> {
    signal?.throwIfAborted();
    const stream = streams[streamIndex]!;
    const { requestId } = stream;
    const where = { streamCount: requestIds.length, streamIndex, requestId };
    progress({ ...where, kind: 'stream_started', stream: { ...stream } });
    try {
      const log = await client.deliveries(requestId, call);
      const unacknowledged = unacknowledgedIn(log);
      stream.unacknowledged = unacknowledged.size;
      stream.afterSeq = await startAfter(receiver.orderingMode, store, requestId, log, unacknowledged);
      const replay = new StreamReplay(stream, receiver, unacknowledged);
      let sinceReport = 0;
      for await (const event of client.events(requestId, { ...call, afterSeq: stream.afterSeq })) {
        if (!replay.admits(event)) continue;
        replay.record(event, await replayWaitingOut(receiver, event, signal));
        if (++sinceReport >= progressEvery) {
          sinceReport = 0;
          progress({ ...where, kind: 'events', stream: { ...stream, failures: [...stream.failures] } });
        }
      }
      replay.finish();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      stream.error = describeFailure(error);
    }
    addCounts(totals, stream);
    progress({ ...where, kind: 'stream_done', stream: { ...stream, failures: [...stream.failures] } });
  }

  // A few workers take the streams in order; each stream's events stay in seq order within its worker.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requestIds.length) await recoverStream(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requestIds.length) }, worker));

  let reactivated: RecoverReport['reactivated'] = false;
  if (reactivate) {
    signal?.throwIfAborted();
    try {
      await client.reactivate({ ...call, retry: true });
      reactivated = true;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      reactivated = describeFailure(error);
    }
  }
  const ok =
    totals.failed === 0 &&
    totals.held === 0 &&
    streams.every((stream) => !stream.error) &&
    typeof reactivated === 'boolean';
  return { ok, streams, totals, reactivated };
}

/** The streams to recover, in order: `requestIds` first, then the store's active streams, each once. */
async function findStreams(
  target: RecoverTarget,
  store: StreamCursorStore | undefined,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const ids = new Set(target.requestIds ?? []);
  if (target.since !== undefined && store?.listStreams) {
    const activeSince = target.since instanceof Date ? target.since.getTime() : target.since;
    let after: string | undefined;
    do {
      signal?.throwIfAborted();
      const page = await store.listStreams({ activeSince, limit: 1000, ...(after === undefined ? {} : { after }) });
      for (const stream of page.streams) ids.add(stream.streamId);
      after = page.next;
    } while (after !== undefined);
  }
  return [...ids];
}

/** The events of a delivery log that no attempt answered with a 2xx, by event id, with their seq. */
function unacknowledgedIn(log: readonly DeliveryLogEntry[]): Map<string, number> {
  const acknowledged = new Set<string>();
  for (const entry of log) if (entry.acknowledged) acknowledged.add(entry.event_id);
  const unacknowledged = new Map<string, number>();
  for (const entry of log) if (!acknowledged.has(entry.event_id)) unacknowledged.set(entry.event_id, entry.seq);
  return unacknowledged;
}

/**
 * The seq replay starts after. The first unacknowledged event bounds it (the seq before it), so it is replayed; with
 * ordering on the stream's cursor does too, so everything the receiver has not run in order is replayed; when the log
 * shows nothing unacknowledged, replay starts after the last acknowledged event: anything later was never attempted
 * (held by a quarantine). A log without entries replays after the cursor with ordering on, else the whole stream.
 */
async function startAfter(
  mode: Receiver['orderingMode'],
  store: StreamCursorStore | undefined,
  requestId: string,
  log: readonly DeliveryLogEntry[],
  unacknowledged: Map<string, number>,
): Promise<number> {
  let fromLog: number | undefined;
  if (unacknowledged.size > 0) fromLog = lowest(unacknowledged.values()) - 1;
  else if (log.length > 0) fromLog = -lowest(log.map((entry) => -entry.seq));
  let start = fromLog ?? -1;
  if (mode !== 'off' && store) {
    const cursor = (await store.getCursor(requestId)) ?? -1;
    start = fromLog === undefined ? cursor : Math.min(fromLog, cursor);
  }
  return Math.max(start, -1);
}

/** Replays one event; an `in_progress` answer (the service delivering it right now) is waited out a little. */
async function replayWaitingOut(
  receiver: RecoverTarget['receiver'],
  event: unknown,
  signal: AbortSignal | undefined,
): Promise<ReceiveResult> {
  let result = await receiver.replay(event, signal ? { signal } : undefined);
  for (const wait of IN_PROGRESS_WAITS_MS) {
    if (result.code !== 'in_progress') break;
    await sleep(wait, signal);
    result = await receiver.replay(event, signal ? { signal } : undefined);
  }
  return result;
}

/** The lowest of many numbers, without spreading them onto the stack (a long log has many). */
function lowest(values: Iterable<number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const value of values) if (value < min) min = value;
  return min;
}

function describeFailure(error: unknown): { code: string; status: number | null; message: string } {
  if (isKybApiError(error)) return { code: error.code, status: error.status, message: error.message };
  if (error instanceof KybWebhookError) return { code: error.code, status: null, message: error.message };
  // A store failure: its message may name hosts or tables, never event contents; keep only its kind.
  const name = error instanceof Error ? error.name : typeof error;
  return {
    code: 'recovery_failed',
    status: null,
    message: `the stream could not be recovered (${name}); see the cause in your store or network logs`,
  };
}

function emptyCounts(): RecoverCounts {
  return { replayed: 0, processed: 0, duplicate: 0, late: 0, failed: 0, skipped: 0, held: 0, unacknowledged: 0 };
}

function addCounts(totals: RecoverCounts, add: RecoverCounts): void {
  for (const key of Object.keys(totals) as (keyof RecoverCounts)[]) totals[key] += add[key];
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
