/*
 * Filling a gap under enforce (docs/architecture.md §8.2, §8.3): the events between the cursor and the delivery
 * that revealed the gap are fetched from the API, verified and run in turn, within `backfillTimeoutMs`; one backfill
 * per stream at a time, a gap the API could not fill not asked about again for `backfillRetryAfterMs`, and an event
 * the API can never serve verifiably settled by gaps.ts (settleUnfillable).
 */
import type { Envelope } from '../events/envelope.js';
import { ERRORS, KybWebhookError, rejection, type ErrorCode } from '../errors.js';
import { safeLog } from '../log/logger.js';
import { isThenable, settleWithin, TIMED_OUT } from '../pipeline/deadline.js';
import {
  fetcherSaysGone,
  MAX_STALE_BACKFILL_EVENTS,
  peekFetched,
  unfillableReasonOf,
  yieldToEventLoop,
} from './backfill-guard.js';
import { TRACING_CHANNELS, tracingChannelsOf, type BackfillTrace } from '../telemetry/channels.js';
import { Observers } from '../telemetry/observers.js';
import { learnedStart, type OrderingContext } from './context.js';
import { describeGone, settleUnfillable, UNFILLABLE_WHY, unfillableReport } from './gaps.js';
import { runInTurn } from './turn.js';
import type { OrderedItem } from './types.js';

/** How a backfill ended: the stream's start once the gap is closed, or why not. */
type Filled<Result> = { start: 0 | 1 } | { answer: Result } | { failure: KybWebhookError };

/** What one step of the backfill loop says: go on, leave the loop, or stop the backfill with this. */
type StepOutcome<Result> = 'continue' | 'break' | { answer: Result } | { failure: KybWebhookError };

/** The state of one backfill, shared by its steps. */
interface BackfillRun<Item extends OrderedItem> {
  readonly item: Item;
  readonly envelope: Envelope;
  /** The seq the cursor expected next when the backfill began. */
  readonly expected: number;
  readonly deadline: number;
  readonly stopReading: AbortController;
  /** The next seq to fill. */
  next: number;
  start: 0 | 1;
  /** Whether the stream's start is known (a cursor, or the API's first event); else the stream is read from -1. */
  startKnown: boolean;
  /** The first seq this backfill ran, for the log line. */
  fromSeq: number | undefined;
  /** The fetcher's events, while a call is open. */
  events: AsyncIterator<unknown> | undefined;
  /** Fetched events that did not advance the backfill (seqs it already has). */
  stale: number;
  read: number;
  yieldedAt: number;
}

/** Every this many fetched events, or this many ms, the backfill loop gives the event loop a turn. */
const YIELD_EVERY_EVENTS = 64;
const YIELD_EVERY_MS = 10;

/**
 * Enforce, a gap, guarded: while another delivery backfills this stream in this process, `{ wait }` (its backfill,
 * to wait for before the cursor is read again); while a backfill from the same cursor failed less than
 * `backfillRetryAfterMs` ago, its answer again without asking the API; else the backfill, whose failure is
 * remembered when the API (or the keys) could not fill the gap.
 */
export async function backfillOnce<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  expected: number,
  startKnown: boolean,
): Promise<{ start: 0 | 1 } | { answer: Result } | { wait: Promise<unknown> }> {
  const { steps, gate } = context;
  const streamId = item.envelope.stream_id;
  const running = gate.runningFor(streamId);
  if (running !== undefined) return { wait: running };
  const recent = gate.recentFailure(streamId, expected);
  if (recent !== undefined) {
    const { failure, retryInMs } = recent;
    const detail = `not asked again for ${retryInMs} ms (ordering.backfillRetryAfterMs); the last backfill from seq ${expected} ended: ${failure.detail ?? failure.message}`;
    return { answer: steps.reject(rejection(failure.code as ErrorCode, detail, failure.cause), item) };
  }
  const filled = await gate.exclusive(streamId, () => watchedBackfill(context, item, expected, startKnown));
  gate.settled(streamId, expected, 'failure' in filled ? filled.failure : undefined);
  return 'failure' in filled ? { answer: steps.reject(filled.failure, item) } : filled;
}

const backfillChannels = tracingChannelsOf(TRACING_CHANNELS.backfill);

/** {@link backfill}, as the receiver's `backfill` operation while anyone watches (a span around the events it runs). */
function watchedBackfill<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  expected: number,
  startKnown: boolean,
): Promise<Filled<Result>> {
  const observers = new Observers('backfill', backfillChannels, context.steps.telemetry);
  if (!observers.active) return backfill(context, item, expected, startKnown);
  const { envelope } = item;
  const trace: BackfillTrace = {
    streamId: envelope.stream_id,
    eventType: envelope.event,
    seq: envelope.seq,
    fromSeq: expected,
  };
  return observers.run(
    trace,
    () => backfill(context, item, expected, startKnown, trace),
    (done, filled) => {
      if ('failure' in filled) done.code = filled.failure.code;
    },
  );
}

/**
 * Enforce, a gap: fetch what lies between the cursor and the event that arrived, verify and run each in turn, within
 * `backfillTimeoutMs`. Resolves to the stream's start once the gap is closed, else to the (non-2xx) answer for the
 * arrived delivery (`failure` when the API or the keys could not fill the gap, `answer` when a backfilled event
 * stopped it); what ran before a failure or the deadline stays recorded, so the retry goes on from there.
 *
 * With no cursor (`startKnown` false) the stream is read from its beginning, and the API's first event says where
 * the stream starts, 0 or 1: the guess (`startGuess`) only spares a new stream's first event this call. So a guess of
 * 0 never stalls streams that start at 1, and a guess of 1 does not skip the seq 0 of a stream whose first delivery
 * is seq 2 or later.
 *
 * An event the API can never serve verifiably (unfillableReasonOf, fetcherSaysGone) stalls the stream for good:
 * settleUnfillable reports it and asks `onUnfillable`, and on a recorded skip the backfill goes on after it.
 */
async function backfill<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  expected: number,
  startKnown: boolean,
  trace?: BackfillTrace,
): Promise<Filled<Result>> {
  const { envelope } = item;
  const run: BackfillRun<Item> = {
    item,
    envelope,
    expected,
    deadline: Date.now() + context.steps.backfillTimeoutMs,
    stopReading: new AbortController(),
    next: expected,
    start: context.startGuess,
    startKnown,
    fromSeq: undefined,
    events: undefined,
    stale: 0,
    read: 0,
    yieldedAt: Date.now(),
  };
  try {
    // Driven by hand, not by for await, so that a fetcher that never answers meets the deadline.
    while (run.next < envelope.seq) {
      const outcome = await backfillStep(context, run);
      if (outcome === 'break') break;
      if (outcome !== 'continue') return outcome;
    }
  } finally {
    if (trace) trace.filled = run.fromSeq === undefined ? 0 : run.next - run.fromSeq;
    // Left early (the gap closed, a failure, the deadline): as for await would, end the iterator, and abort the
    // signal so a page still loading is abandoned. Never waited for: the fetcher may hang in return() as in next().
    if (run.events) {
      run.stopReading.abort();
      stopQuietly(run.events);
    }
  }
  if (run.next < envelope.seq) {
    return {
      failure: rejection('out_of_order', `seq ${run.next} to ${envelope.seq - 1} are not available from the API yet`),
    };
  }
  const { logger } = context.steps;
  if (logger && run.fromSeq !== undefined) {
    safeLog(logger, {
      level: 'info',
      message: `stream gap backfilled: seq ${run.fromSeq} to ${envelope.seq - 1}`,
      code: 'stream_backfilled',
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  }
  return { start: run.start };
}

/** One turn of the backfill loop: open the fetcher when needed, take its next event within the deadline. */
async function backfillStep<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  run: BackfillRun<Item>,
): Promise<StepOutcome<Result>> {
  const { steps } = context;
  const { envelope } = run;
  if (run.events === undefined) {
    try {
      run.events = asyncIteratorOf(
        steps.fetchEventsAfter!(envelope.stream_id, run.startKnown ? run.next - 1 : -1, run.stopReading.signal),
      );
    } catch (error) {
      return (await afterThrow(context, run, error)) ?? 'continue';
    }
  }
  // A fetcher whose events are all ready only queues microtasks: give timers and I/O their turn now and then.
  if (++run.read % YIELD_EVERY_EVENTS === 0 || Date.now() - run.yieldedAt >= YIELD_EVERY_MS) {
    await yieldToEventLoop();
    run.yieldedAt = Date.now();
  }
  const remaining = run.deadline - Date.now();
  let step: IteratorResult<unknown> | typeof TIMED_OUT;
  try {
    step = remaining > 0 ? await settleWithin(run.events.next(), remaining) : TIMED_OUT;
  } catch (error) {
    return (await afterThrow(context, run, error)) ?? 'continue';
  }
  if (step === TIMED_OUT) {
    const detail = `the backfill of seq ${run.next} to ${envelope.seq - 1} did not finish within backfillTimeoutMs (${steps.backfillTimeoutMs} ms); the retry goes on from seq ${run.next}`;
    return { failure: rejection('backfill_unavailable', detail) };
  }
  if (step.done) {
    run.events = undefined;
    return 'break';
  }
  return takeFetched(context, run, step.value);
}

/** A throwing fetcher has ended: a transient failure, or an unfillable `next` (undefined once it was skipped). */
async function afterThrow<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  run: BackfillRun<Item>,
  error: unknown,
): Promise<{ failure: KybWebhookError } | undefined> {
  run.events = undefined;
  if (!fetcherSaysGone(error)) return { failure: rejection('backfill_unavailable', 'fetchEventsAfter failed', error) };
  const detail = `fetchEventsAfter says it is gone (${describeGone(error)})`;
  const report = unfillableReport(run.envelope, run.expected, run.next, 'gone', detail, undefined);
  const failure = await settleUnfillable(context, report, run.envelope, run.start);
  if (failure) return { failure };
  run.startKnown = true;
  run.next += 1;
  return undefined;
}

/** One fetched event: skipped when the backfill has it, verified, then run in turn when it is the next seq. */
async function takeFetched<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  run: BackfillRun<Item>,
  raw: unknown,
): Promise<StepOutcome<Result>> {
  const { steps } = context;
  const { envelope } = run;
  const peeked = peekFetched(raw);
  // Seqs it already has (repeated, or an API that ignores afterSeq): not verified, not run, and bounded, so a
  // fetcher repeating one seq forever ends here rather than at backfillTimeoutMs.
  if (run.startKnown && peeked.seq !== undefined && peeked.seq < run.next) {
    if (++run.stale > MAX_STALE_BACKFILL_EVENTS) {
      const detail = `the API answered more than ${MAX_STALE_BACKFILL_EVENTS} events at or before seq ${run.next - 1}, which do not advance the backfill; gave up at seq ${run.next}`;
      return { failure: rejection('backfill_invalid', detail) };
    }
    return 'continue';
  }
  const fetched = await steps.verifyFetched(raw);
  if (fetched instanceof KybWebhookError) return refusedFetched(context, run, fetched, peeked);
  const fetchedEnvelope = fetched.envelope;
  fetched.waitUntil = run.item.waitUntil; // a backfilled handler's late outcome settles after this delivery's answer
  if (fetchedEnvelope.stream_id !== envelope.stream_id) {
    return {
      failure: rejection('backfill_invalid', `the API answered an event of another stream for seq ${run.next}`),
    };
  }
  // A stream never holds one event id at two seqs: the delivered event's id served for another seq is a relabel of
  // the API's, which, run and recorded, would answer the genuine delivery `duplicate` and never handle it.
  if (fetchedEnvelope.event_id === envelope.event_id && fetchedEnvelope.seq !== envelope.seq) {
    const detail = `the API answered the delivered event's id for seq ${fetchedEnvelope.seq}`;
    return { failure: rejection('backfill_invalid', detail) };
  }
  if (!run.startKnown) {
    run.startKnown = true;
    const first = fetchedEnvelope.seq;
    // A backfill runs only for a seq past the expected one (at least 0), so the delivered seq is 1 or more: a first
    // event at 0 or 1 is never after it.
    if (first === 0 || first === 1) {
      run.start = first;
      run.next = first;
      if (first !== steps.firstSeq) learnedStart(context, first);
      if (first === envelope.seq) return 'break'; // the arrived event is the stream's first: nothing to fill
    }
  }
  // Never behind `next` here: a seq the backfill has was passed over above, unverified, once the start was known, and
  // the API's first event sets `next` to itself or lies past it.
  if (fetchedEnvelope.seq > run.next) return 'break'; // the API lacks `next` too: not fillable yet
  const stopped = await runInTurn(context, fetched, run.item, run.start);
  if (stopped !== undefined) return { answer: stopped };
  run.fromSeq ??= run.next;
  run.next += 1;
  return 'continue';
}

/**
 * A fetched event that failed verification: unfillable for good (served without its attestation, signed by a
 * retired key) when it is the seq the backfill needs, else this receiver's own condition (keys unreachable) or
 * `backfill_invalid`.
 */
async function refusedFetched<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  run: BackfillRun<Item>,
  fetched: KybWebhookError,
  peeked: ReturnType<typeof peekFetched>,
): Promise<StepOutcome<Result>> {
  const { envelope } = run;
  const about = `the fetched event for seq ${run.next}`;
  const reason = unfillableReasonOf(fetched);
  const startsHere =
    !run.startKnown && peeked.streamId === envelope.stream_id && (peeked.seq === 0 || peeked.seq === 1);
  if (startsHere && peeked.seq === envelope.seq) {
    // The API's first event is the delivered one, whose copy there fails (a purged release): the delivery in hand was
    // verified, so the stream starts at it and nothing is missing, as when the copy verifies (takeFetched).
    run.startKnown = true;
    run.start = envelope.seq as 0 | 1;
    run.next = run.start;
    if (run.start !== context.steps.firstSeq) learnedStart(context, run.start);
    return 'break';
  }
  const firstOfStream = startsHere && peeked.seq! < envelope.seq;
  if (reason !== undefined && peeked.streamId === envelope.stream_id && (peeked.seq === run.next || firstOfStream)) {
    if (firstOfStream) {
      run.startKnown = true;
      run.start = peeked.seq as 0 | 1;
      run.next = run.start;
      if (run.start !== context.steps.firstSeq) learnedStart(context, run.start);
    }
    const detail = `${UNFILLABLE_WHY[reason]} (${fetched.detail ?? fetched.code})`;
    const report = unfillableReport(envelope, run.expected, run.next, reason, detail, peeked.eventId);
    const failure = await settleUnfillable(context, report, envelope, run.start);
    if (failure) return { failure };
    run.next += 1;
    return 'continue';
  }
  // This receiver could not check the event (keys unreachable, attestation not configured): that condition's
  // own code, not a verdict on the API's event.
  if (ERRORS[fetched.code as ErrorCode]?.status >= 500) {
    return { failure: rejection(fetched.code as ErrorCode, `${about}: ${fetched.detail ?? fetched.message}`, fetched) };
  }
  return {
    failure: rejection(
      'backfill_invalid',
      `${about} was refused: ${fetched.code}${fetched.detail ? ` (${fetched.detail})` : ''}`,
      fetched,
    ),
  };
}

/** The events of a fetcher as one async iterator: a sync iterable's values are awaited, as for await would. */
function asyncIteratorOf(source: AsyncIterable<unknown> | Iterable<unknown>): AsyncIterator<unknown> {
  if (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
    return (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return (async function* () {
    yield* source as Iterable<unknown>;
  })();
}

/** Ends an iterator left early without waiting for it: its return() may hang or fail, as its next() did. */
function stopQuietly(events: AsyncIterator<unknown>): void {
  try {
    const ended = events.return?.();
    if (isThenable(ended)) ended.then(undefined, () => {});
  } catch {
    // nothing to do: the iterator is dropped either way
  }
}
