/*
 * Tracing channels (docs/observability.md): the receiver publishes what it does on `node:diagnostics_channel`, the
 * standard hook APMs and OpenTelemetry instrumentations subscribe to (Fastify and undici publish theirs the same way).
 * Nothing is imported: the module is looked up at run time through `process.getBuiltinModule`, present on Node
 * (20.16+), Bun, Deno and Workers with `nodejs_compat`; where it is missing (Workers without it, browsers) every
 * operation simply runs unobserved. A channel with no subscriber costs one property read per operation and
 * allocates nothing: the context object is only made once someone listens.
 *
 * Each operation is a tracing channel as Node defines them (`tracing:<name>:start`, `:end`, `:asyncStart`,
 * `:asyncEnd`, `:error`), published on plain named channels so every runtime's `diagnostics_channel.channel()` can
 * carry it and `tracingChannel(name).subscribe({ … })` receives it. An operation that finishes synchronously (the
 * memory store, a synchronous handler) publishes `start` and `end` only, as Node's `traceSync` does; one that returns
 * a promise then publishes `asyncStart` and `asyncEnd` when it settles, as `tracePromise` does, and `error` when it
 * fails. The context objects hold ids and outcomes only: never a body, a secret, a token or a released value.
 */
import { isThenable } from '../pipeline/deadline.js';

/**
 * The tracing channel names the receiver and the client publish on. Subscribe with
 * `diagnostics_channel.tracingChannel(name).subscribe({ start, end, asyncStart, asyncEnd, error })`.
 *
 * @example
 * ```ts
 * import diagnostics from 'node:diagnostics_channel'
 * import { TRACING_CHANNELS, type ReceiveTrace } from '@kyb-webhooks/core'
 *
 * diagnostics.tracingChannel<unknown, ReceiveTrace>(TRACING_CHANNELS.receive).subscribe({
 *   start() {},
 *   end() {},
 *   asyncStart() {},
 *   asyncEnd(trace) { console.log(trace.eventType, trace.status, trace.code) },
 *   error() {},
 * })
 * ```
 */
export const TRACING_CHANNELS = Object.freeze({
  /** One delivery through `receiver.receive` (adapters and the fetch handler call it): {@link ReceiveTrace}. */
  receive: 'kyb-webhooks:receive',
  /** One handler run for one event: {@link HandlerTrace}. */
  handler: 'kyb-webhooks:handler',
  /** One call of a store method by the receiver: {@link StoreTrace}. */
  store: 'kyb-webhooks:store',
  /** Queue mode: one run of one job by a queue worker, around its store calls and handler runs: {@link JobTrace}. */
  job: 'kyb-webhooks:job',
  /** One fetch of the attestation JWKS (`attestation.jwksUrl`): {@link JwksTrace}. */
  jwks: 'kyb-webhooks:jwks',
  /** Ordering `enforce`: one backfill of a stream's gap from the API, around the events it runs: {@link BackfillTrace}. */
  backfill: 'kyb-webhooks:backfill',
  /** One HTTP request (one attempt) of `@kyb-webhooks/client` to the KYB API: {@link ClientRequestTrace}. */
  clientRequest: 'kyb-webhooks:client:request',
} as const);

/**
 * The context of a `kyb-webhooks:receive` trace. At `start` only `method` and `deliveryAttempt` are known; the rest
 * is set before `end` (a delivery answered synchronously) or `asyncEnd`. The event's fields are set only when the
 * delivery was authenticated (HMAC or attestation), so a forged body never names the event a span describes.
 *
 * @example
 * ```ts
 * const trace: ReceiveTrace = { method: 'POST', status: 200, eventId: '01J…', eventType: 'kyb.data_request.released' }
 * ```
 */
export interface ReceiveTrace {
  method: string;
  /** `Service-Delivery-Attempt`, when present and a whole number. */
  deliveryAttempt?: number;
  /** The HTTP status answered. */
  status?: number;
  /** The rejection code, or the acknowledgement code (`duplicate`, `queued`, …); absent for a plain 200. */
  code?: string;
  eventId?: string;
  eventType?: string;
  streamId?: string;
  seq?: number;
  /** The envelope's `api_version`. */
  apiVersion?: string;
  /**
   * When the service signed the delivery: the verified `t` of `Service-KYB-Signature`, in Unix seconds (set on
   * receivers with `secrets` once the HMAC held). Now minus it is the delivery's lag.
   */
  signedAt?: number;
}

/**
 * The context of a `kyb-webhooks:handler` trace: one handler (registered with `on`, `onAny`, `onUnknown` or
 * `onUnauthenticated`) run for one event; `error` is what it threw or rejected with.
 *
 * @example
 * ```ts
 * const trace: HandlerTrace = { eventId: '01J…', eventType: 'kyb.data_request.released', handler: 'saveRelease' }
 * ```
 */
export interface HandlerTrace {
  eventId: string;
  eventType: string;
  /** The handler function's name, or `'<anonymous>'`. */
  handler: string;
  /**
   * Set for an `onUnauthenticated` handler: nothing authenticated the event, so `eventId` and `eventType` are what the
   * sender wrote. A layer must not record them as the event's (a forged body would name spans and metrics).
   */
  unauthenticated?: true;
  error?: unknown;
}

/**
 * The context of a `kyb-webhooks:store` trace: one call of the dedupe or cursor store. `subject` is the event's
 * dedupe key for `claim`, `complete`, `release` and `extend`, and the stream id for the cursor operations.
 *
 * @example
 * ```ts
 * const trace: StoreTrace = { operation: 'claim', subject: '01J…' }
 * ```
 */
export interface StoreTrace {
  operation: string;
  subject: string;
  /** What the store threw or rejected with, or the receiver's timeout error past `storeTimeoutMs`. */
  error?: unknown;
}

/**
 * The context of a `kyb-webhooks:job` trace (queue mode): one run of one job by a queue worker. Its store calls and
 * handler runs are traced inside it. `carrier` is the trace context the receiving side injected when it enqueued the
 * event (the receiver's `telemetry.inject`), so the worker's span can link to the delivery's; `status` and `code` are
 * the outcome of the run as the receiver would have answered it inline, `error` what failed the job.
 *
 * @example
 * ```ts
 * const trace: JobTrace = { jobId: '42', queue: 'pg-boss queue', eventId: '01J…', eventType: 'kyb.data_request.released',
 *   streamId: 'dr_1', seq: 3, attempt: 1, enqueuedAt: Date.now() - 40 }
 * ```
 */
export interface JobTrace {
  /** The queue's id for the job. */
  jobId: string;
  /** The queue's name (`memory queue`, `pg-boss queue`, `BullMQ queue`). */
  queue: string;
  eventId: string;
  eventType: string;
  streamId: string;
  seq: number;
  /** 1 for the job's first run, 2 for its first retry, and so on. */
  attempt: number;
  /** When the receiver enqueued it (ms since the epoch); now minus it is the time the job waited. */
  enqueuedAt: number;
  /** The trace context injected at enqueue (W3C `traceparent` and the like), when there was one. */
  carrier?: Readonly<Record<string, string>>;
  /** The status the run ended with (2xx: done; anything else fails the job back to the queue). */
  status?: number;
  /** The run's rejection or acknowledgement code (`duplicate`, `handler_failed`, `job_undecryptable`, …). */
  code?: string;
  /** What failed the job. */
  error?: unknown;
}

/**
 * The context of a `kyb-webhooks:jwks` trace: one fetch of the attestation key set. `url` is shown without
 * credentials or query; `status` is set once the server answered, `keys` once the document parsed, `error` when the
 * fetch failed (a timeout, a status other than 200, a body too large or malformed).
 *
 * @example
 * ```ts
 * const trace: JwksTrace = { url: 'https://api.kyb.example.com/.well-known/kyb-jwks.json', status: 200, keys: 2 }
 * ```
 */
export interface JwksTrace {
  url: string;
  status?: number;
  /** How many keys the fetched set holds. */
  keys?: number;
  error?: unknown;
}

/**
 * The context of a `kyb-webhooks:backfill` trace (ordering `enforce`): the delivery of `streamId` at `seq` found the
 * cursor expecting `fromSeq`, so the events from `fromSeq` to `seq - 1` are fetched from the API and run first.
 * `filled` is how many seqs the backfill settled (ran, found done, or skipped); `code` the rejection the delivery
 * got when the gap could not be closed (`out_of_order`, `jwks_unavailable`, …).
 *
 * @example
 * ```ts
 * const trace: BackfillTrace = { streamId: 'dr_1', eventType: 'kyb.data_request.released', seq: 7, fromSeq: 4, filled: 3 }
 * ```
 */
export interface BackfillTrace {
  streamId: string;
  /** The type of the delivery that revealed the gap. */
  eventType: string;
  /** The delivery's seq. */
  seq: number;
  /** The seq the stream's cursor expected next. */
  fromSeq: number;
  filled?: number;
  code?: string;
  error?: unknown;
}

/**
 * The context of a `kyb-webhooks:client:request` trace: one attempt of one call of `@kyb-webhooks/client` to the KYB
 * API (a retry is another trace, `attempt` one higher). `route` is the path template, its ids replaced by `{id}`, for
 * metrics; `url` the URL requested, ids included, every query value shown as `REDACTED`. Neither the key nor a query
 * value nor a body is ever in it. `status` is set once the API answered, `error` when the attempt failed without an
 * answer (a timeout, a network error) or its body was over the client's limit.
 *
 * @example
 * ```ts
 * const trace: ClientRequestTrace = { method: 'GET', route: '/api/v1/kyb/data-requests/{id}/events',
 *   url: 'https://api.kyb.example.com/api/v1/kyb/data-requests/dr_01jd8x2k7q/events?after_seq=REDACTED',
 *   origin: 'https://api.kyb.example.com', attempt: 1, status: 200 }
 * ```
 */
export interface ClientRequestTrace {
  method: string;
  route: string;
  /**
   * The URL requested, for a span's `url.full`: ids as they are, each query value `REDACTED` (a page cursor, a
   * filter a caller passed). Absent from traces of an older client.
   */
  url?: string;
  /** The API's scheme, host and port. */
  origin: string;
  /** 1 for the first attempt, 2 for the first retry. */
  attempt: number;
  status?: number;
  error?: unknown;
}

/** A message of a channel as every runtime's `diagnostics_channel` has it. */
interface ChannelLike {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

interface DiagnosticsChannelModule {
  channel(name: string): ChannelLike;
}

/**
 * The five channels of one traced operation.
 *
 * @example
 * ```ts
 * const receive = tracingChannelsOf(TRACING_CHANNELS.receive)
 * if (receive?.observed) traceOperation(receive, { method: 'POST' }, run)
 * ```
 */
export class TracingChannels {
  readonly start: ChannelLike;
  readonly end: ChannelLike;
  readonly asyncStart: ChannelLike;
  readonly asyncEnd: ChannelLike;
  readonly error: ChannelLike;

  constructor(module: DiagnosticsChannelModule, name: string) {
    this.start = module.channel(`tracing:${name}:start`);
    this.end = module.channel(`tracing:${name}:end`);
    this.asyncStart = module.channel(`tracing:${name}:asyncStart`);
    this.asyncEnd = module.channel(`tracing:${name}:asyncEnd`);
    this.error = module.channel(`tracing:${name}:error`);
  }

  /** Whether anyone listens: checked before a context object is made. */
  get observed(): boolean {
    return (
      this.start.hasSubscribers ||
      this.end.hasSubscribers ||
      this.asyncEnd.hasSubscribers ||
      this.asyncStart.hasSubscribers ||
      this.error.hasSubscribers
    );
  }
}

let moduleLookup: DiagnosticsChannelModule | null | undefined;

/** `node:diagnostics_channel` where the runtime has it, looked up once; null where it does not. */
function diagnosticsChannelModule(): DiagnosticsChannelModule | null {
  if (moduleLookup !== undefined) return moduleLookup;
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    // The bare id: the same module, and no "node:" string for a Workers bundler to refuse.
    const module = process?.getBuiltinModule?.('diagnostics_channel') as DiagnosticsChannelModule | undefined;
    moduleLookup = typeof module?.channel === 'function' ? module : null;
  } catch {
    moduleLookup = null;
  }
  return moduleLookup;
}

/**
 * The channels of the traced operation `name`, or undefined where the runtime has no `diagnostics_channel`.
 *
 * @example
 * ```ts
 * const store = tracingChannelsOf(TRACING_CHANNELS.store)
 * ```
 */
export function tracingChannelsOf(name: string): TracingChannels | undefined {
  const module = diagnosticsChannelModule();
  return module ? new TracingChannels(module, name) : undefined;
}

/**
 * Runs `run` as one traced operation: `start`, then `end` once it returned; for a promise, `asyncStart` and
 * `asyncEnd` once it settled (after `settled` copied the outcome into the context), with `error` before them when it
 * threw or rejected. Returns what `run` returned (a native promise as it is; another thenable as one native promise
 * of it, so that a lazy one, whose every `then` runs it again, runs once); a subscriber that throws is the runtime's to report (diagnostics_channel never lets it reach the publisher).
 *
 * @example
 * ```ts
 * return traceOperation(channels, { operation: 'claim', subject: key }, () => store.claim(key, options))
 * ```
 */
export function traceOperation<C extends object, R>(
  channels: TracingChannels,
  context: C,
  run: () => R,
  settled?: (context: C, value: Awaited<R>) => void,
): R {
  channels.start.publish(context);
  let result: R;
  try {
    result = run();
  } catch (error) {
    (context as { error?: unknown }).error = error;
    channels.error.publish(context);
    channels.end.publish(context);
    throw error;
  }
  if (!isThenable(result)) {
    settled?.(context, result as Awaited<R>);
    channels.end.publish(context);
    return result;
  }
  channels.end.publish(context);
  // One native promise for every reader: a lazy thenable (a query builder) runs again on each call of its `then`.
  const promise = Promise.resolve(result);
  promise.then(
    (value) => {
      settled?.(context, value as Awaited<R>);
      channels.asyncStart.publish(context);
      channels.asyncEnd.publish(context);
    },
    (error: unknown) => {
      (context as { error?: unknown }).error = error;
      channels.error.publish(context);
      channels.asyncStart.publish(context);
      channels.asyncEnd.publish(context);
    },
  );
  return promise as R;
}
