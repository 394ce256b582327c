/*
 * Who watches one kind of operation of one receiver (docs/observability.md): the tracing channels of
 * telemetry/channels.ts, while someone subscribes, and the receiver's `telemetry` option (an OpenTelemetry layer, say),
 * which runs the operation itself so that the work inside it (a handler's own database calls) happens in its span's
 * context. Nothing watching: the operation runs as it is, with no trace object made.
 */
import { isThenable } from '../pipeline/deadline.js';
import {
  TRACING_CHANNELS,
  traceOperation,
  tracingChannelsOf,
  type BackfillTrace,
  type ClientRequestTrace,
  type HandlerTrace,
  type JobTrace,
  type JwksTrace,
  type ReceiveTrace,
  type StoreTrace,
  type TracingChannels,
} from './channels.js';

/**
 * The operations the receiver reports.
 *
 * @example
 * ```ts
 * const timed: TracedOperation[] = ['receive', 'handler', 'store']
 * ```
 */
export type TracedOperation = 'receive' | 'handler' | 'store' | 'job' | 'jwks' | 'backfill' | 'request';

/**
 * The trace object of each operation.
 *
 * @example
 * ```ts
 * const store: TraceOf['store'] = { operation: 'claim', subject: '01J…' }
 * ```
 */
export interface TraceOf {
  receive: ReceiveTrace;
  handler: HandlerTrace;
  store: StoreTrace;
  job: JobTrace;
  jwks: JwksTrace;
  backfill: BackfillTrace;
  /** `@kyb-webhooks/client`'s calls to the KYB API, one per attempt (its `telemetry` option). */
  request: ClientRequestTrace;
}

/**
 * The receiver's `telemetry` option: what an observability layer (the OpenTelemetry one of
 * `@kyb-webhooks/opentelemetry`) implements. `around` is called for every delivery, handler run and store call, and
 * must call `run` exactly once and return what it returned (the same promise, or a promise of the same value), never
 * throwing an error of its own. A layer that breaks that rule anyway never changes an outcome: a throw of `enabled`
 * counts as "nothing watches", a throw of `around` before it called `run` runs the operation unobserved, and one after
 * gives the caller what `run` returned or threw. A `run` whose answer is another kind of thenable than a native
 * promise (a lazy query builder) gives `around` one native promise of it, so watching never runs it again. The trace
 * object is filled in as the receiver learns more: a delivery's status, code and event once `run`'s promise settled,
 * a handler's or a store call's `error` when it failed.
 *
 * @example
 * ```ts
 * const timing: ReceiverTelemetry = {
 *   around(operation, trace, run) {
 *     const started = performance.now()
 *     const result = run()
 *     void Promise.resolve(result).finally(() => metrics.record(operation, performance.now() - started))
 *     return result
 *   },
 * }
 * createReceiver({ secrets, telemetry: timing })
 * ```
 */
export interface ReceiverTelemetry {
  around<O extends TracedOperation, R>(operation: O, trace: TraceOf[O], run: () => R): R;
  /**
   * Whether the layer would record anything now (its providers are registered, say). Optional, asked before each
   * operation: `false` skips `around` and the trace object altogether, so a layer with nothing behind it costs the
   * receiver nothing. Absent: always.
   */
  enabled?(): boolean;
  /**
   * Ordering: a gap (an event ahead of the stream's cursor), a late event (behind it) or, under `enforce`, a seq the
   * API can never serve verifiably; also logged and told to `onGap` handlers. Optional; a throw is ignored.
   */
  streamGap?(report: StreamGapReport): void;
  /**
   * Queue mode: the trace context to carry in the job the delivery becomes (W3C `traceparent`, say), so the worker's
   * `job` operation can link to the delivery (it gets it back as `JobTrace.carrier`). Called inside the `receive`
   * operation, as the event is enqueued. Optional; a throw or a non-string value is ignored, and at most 8 entries of
   * up to 512 characters each are kept. Trace ids only: it is stored in the queue in the clear.
   */
  inject?(): Record<string, string> | undefined;
  /**
   * Queue mode: a job's last attempt failed, so the queue dead-letters it and its stream waits (also logged as
   * `stream_blocked`). Optional; a throw is ignored.
   */
  streamBlocked?(report: StreamBlockedReport): void;
}

/**
 * What {@link ReceiverTelemetry.streamBlocked} is told. Ids are for logs and span events, never metric attributes.
 *
 * @example
 * ```ts
 * const report: StreamBlockedReport = { streamId: 'dr_1', seq: 4, eventId: '01J…', eventType: 'kyb.data_request.released', attempts: 6, error: 'handler_failed' }
 * ```
 */
export interface StreamBlockedReport {
  streamId: string;
  seq: number;
  eventId: string;
  eventType: string;
  /** How many times the job ran. */
  attempts: number;
  /** The last failure: a rejection code (`handler_failed`, `job_undecryptable`, …) or an error's message. */
  error: string;
}

/**
 * What {@link ReceiverTelemetry.streamGap} is told: the fields every gap report has (`onGap` gets the whole
 * `GapReport`, which extends this). Ids are for logs and span events, never metric attributes.
 *
 * @example
 * ```ts
 * const report: StreamGapReport = { kind: 'gap', mode: 'enforce', streamId: 'dr_1', seq: 7, expectedSeq: 4, eventId: '01J…', eventType: 'kyb.data_request.released' }
 * ```
 */
export interface StreamGapReport {
  /** `gap`: ahead of the stream's cursor; `late`: behind it; `unfillable`: a seq the API can never serve verifiably. */
  kind: 'gap' | 'late' | 'unfillable';
  mode: 'detect' | 'enforce';
  streamId: string;
  /** The event's seq. */
  seq: number;
  /** The seq the stream's cursor expected next. */
  expectedSeq: number;
  eventId: string;
  eventType: string;
}

/**
 * The watchers of one operation of one receiver (or client): made by {@link observersOf}.
 *
 * @example
 * ```ts
 * const watchers: Observers<'request'> = observersOf('request', telemetry)
 * ```
 */
export class Observers<O extends TracedOperation> {
  constructor(
    readonly operation: O,
    readonly channels: TracingChannels | undefined,
    readonly telemetry: ReceiverTelemetry | undefined,
  ) {}

  /**
   * Whether anyone watches now: checked before a trace object is made. The reads of `enabledTelemetry` and of the
   * channels' `observed` are written out: this runs for every operation of every delivery, and the two getter calls
   * cost more than the reads (about 800 instructions per delivery in a new process, 600 once warm, Node 24).
   */
  get active(): boolean {
    const { telemetry, channels } = this;
    if (telemetry !== undefined && isEnabled(telemetry)) return true;
    return (
      channels !== undefined &&
      (channels.start.hasSubscribers ||
        channels.end.hasSubscribers ||
        channels.asyncEnd.hasSubscribers ||
        channels.asyncStart.hasSubscribers ||
        channels.error.hasSubscribers)
    );
  }

  /** The receiver's `telemetry`, unless it is absent or says it records nothing now. */
  private get enabledTelemetry(): ReceiverTelemetry | undefined {
    const { telemetry } = this;
    return telemetry !== undefined && isEnabled(telemetry) ? telemetry : undefined;
  }

  /** Runs `run` watched, `settled` filling the trace from its value before anyone reads the outcome. */
  run<R>(trace: TraceOf[O], run: () => R, settled?: (trace: TraceOf[O], value: Awaited<R>) => void): R {
    const channels = this.channels?.observed ? this.channels : undefined;
    const inner = channels
      ? () => traceOperation(channels, trace, run, settled)
      : () => settleInto(trace, run, settled);
    const telemetry = this.enabledTelemetry;
    return telemetry ? aroundGuarded(telemetry, this.operation, trace, inner) : inner();
  }
}

/**
 * `telemetry.enabled()`, a throw counting as "records nothing now": a broken layer never fails an operation.
 *
 * @example
 * ```ts
 * const carrier = isEnabled(telemetry) ? telemetry.inject?.() : undefined
 * ```
 */
export function isEnabled(telemetry: ReceiverTelemetry): boolean {
  try {
    return telemetry.enabled?.() !== false;
  } catch {
    return false;
  }
}

/**
 * `telemetry.around(operation, trace, run)`, so that a layer that throws never changes the operation's outcome: a
 * throw before it ran `run` runs it unobserved; a throw after `run` returned gives back what `run` returned; a throw
 * of `run` itself (the operation's own failure) goes on to the caller as it would have without the layer.
 */
function aroundGuarded<O extends TracedOperation, R>(
  telemetry: ReceiverTelemetry,
  operation: O,
  trace: TraceOf[O],
  run: () => R,
): R {
  let ran: { value: R } | { failure: unknown } | undefined;
  const watched = (): R => {
    try {
      const value = run();
      ran = { value };
      return value;
    } catch (failure) {
      ran = { failure };
      throw failure;
    }
  };
  try {
    return telemetry.around(operation, trace, watched);
  } catch {
    if (ran === undefined) return run();
    if ('value' in ran) return ran.value;
    throw ran.failure;
  }
}

/** `run()`, its outcome copied into the trace (by a reaction registered before the caller's own). */
function settleInto<C extends object, R>(trace: C, run: () => R, settled?: (trace: C, value: Awaited<R>) => void): R {
  let result: R;
  try {
    result = run();
  } catch (error) {
    (trace as { error?: unknown }).error = error;
    throw error;
  }
  if (!isThenable(result)) {
    settled?.(trace, result as Awaited<R>);
    return result;
  }
  // One native promise for every reader: a lazy thenable (a query builder) runs again on each call of its `then`.
  const promise = Promise.resolve(result);
  promise.then(
    (value) => settled?.(trace, value as Awaited<R>),
    (error: unknown) => {
      (trace as { error?: unknown }).error = error;
    },
  );
  return promise as R;
}

/** The tracing channel of each operation. */
const CHANNEL_OF: Record<TracedOperation, string> = {
  receive: TRACING_CHANNELS.receive,
  handler: TRACING_CHANNELS.handler,
  store: TRACING_CHANNELS.store,
  job: TRACING_CHANNELS.job,
  jwks: TRACING_CHANNELS.jwks,
  backfill: TRACING_CHANNELS.backfill,
  request: TRACING_CHANNELS.clientRequest,
};

/**
 * The watchers of `operation` for a package of this family (the client): its tracing channel, while someone
 * subscribes, and `telemetry`. Check `active` before making a trace object; `run` then runs the operation watched.
 *
 * @example
 * ```ts
 * const requests = observersOf('request', options.telemetry)
 * const answer = requests.active ? requests.run(trace, () => fetch(url), (t, response) => (t.status = response.status)) : fetch(url)
 * ```
 */
export function observersOf<O extends TracedOperation>(
  operation: O,
  telemetry: ReceiverTelemetry | undefined,
): Observers<O> {
  return new Observers(operation, tracingChannelsOf(CHANNEL_OF[operation]), telemetry);
}
