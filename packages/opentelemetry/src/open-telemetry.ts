/*
 * The receiver's `telemetry` option as OpenTelemetry spans and metrics, through `@opentelemetry/api` only. The core
 * calls `around` for every delivery ('receive'), handler run ('handler') and store call ('store'), nested as they run;
 * each becomes a span, and `run` runs in that span's context (`context.with`) so the handler's own spans (its database,
 * its HTTP calls) and the store driver's spans become its children. The trace object the core passes is filled in by
 * the time `run`'s promise settles: that is when the span gets its outcome, its final name and its metrics.
 *
 * What is recorded is ids and outcomes only. Never a body, a header value, a secret, a token, an answer value, nor an
 * exception's message or stack (a handler's error message is user code and may hold personal data): a failure is
 * recorded as its type (the error's `code`, else its class name) in `error.type` and an exception event carrying only
 * `exception.type`.
 */
import {
  context,
  isSpanContextValid,
  createNoopMeter,
  metrics,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace as traceApi,
  type Attributes,
  type Context,
  type Link,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type {
  BackfillTrace,
  ClientRequestTrace,
  HandlerTrace,
  JobTrace,
  JwksTrace,
  StreamGapReport,
  ReceiverTelemetry,
  ReceiveTrace,
  StoreTrace,
  StreamBlockedReport,
  TracedOperation,
} from '@kyb-webhooks/core';
import { optionRules, validateOptions, type OptionsSpec } from '@kyb-webhooks/core/adapter';
import { addServer, errorTypeOf, HTTP_METHODS, recordFailure, requestAttributes } from './attributes.js';
import { instrumentsOf, type Instruments } from './instruments.js';
import { ATTRIBUTES as A, MESSAGING_SYSTEM, UNAUTHENTICATED_SPAN_NAME } from './names.js';
import { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './version.js';

/**
 * Options of {@link openTelemetry}: the providers to use instead of the global ones.
 *
 * @example
 * ```ts
 * const telemetry = openTelemetry({ tracerProvider, meterProvider })
 * ```
 */
export interface OpenTelemetryOptions {
  /** Default: the global one (`trace.getTracerProvider()`), looked up when a span starts, so it may be registered later. */
  tracerProvider?: TracerProvider;
  /** Default: the global one (`metrics.getMeterProvider()`), looked up again whenever the global one changed. */
  meterProvider?: MeterProvider;
}

/**
 * The receiver's `telemetry` option for OpenTelemetry: a CONSUMER span per delivery (`process <event type>`), an
 * INTERNAL child span per handler run and per store call, and the `kyb.webhook.*` metrics. The tracer and meter are
 * named `@kyb-webhooks/opentelemetry` with the package's version.
 *
 * @example
 * ```ts
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { openTelemetry } from '@kyb-webhooks/opentelemetry'
 *
 * const receiver = createReceiver({ secrets: { '1': process.env.KYB_SECRET_V1! }, telemetry: openTelemetry() })
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): ReceiverTelemetry {
  validateOptions(options, OPTIONS_SPEC);
  return new OpenTelemetryLayer(options);
}

// A provider without its method failed only when the first delivery was traced, far from the mistake.
const OPTIONS_SPEC: OptionsSpec = {
  owner: 'openTelemetry',
  example: 'openTelemetry({ tracerProvider, meterProvider })',
  optional: true,
  options: {
    tracerProvider: optionRules.methods(
      ['getTracer'],
      "pass a TracerProvider (the SDK's NodeTracerProvider), or leave it out to use the global one",
    ),
    meterProvider: optionRules.methods(
      ['getMeter'],
      "pass a MeterProvider (the SDK's MeterProvider), or leave it out to use the global one",
    ),
  },
  aliases: { tracer: 'tracerProvider', provider: 'tracerProvider', meter: 'meterProvider' },
};

class OpenTelemetryLayer implements ReceiverTelemetry {
  private readonly tracer: Tracer;
  /** The meter provider the instruments came from; the global one is checked again at each delivery and store call. */
  private meterProvider: MeterProvider | undefined;
  private instruments: Instruments | undefined;
  private readonly globalMeter: boolean;

  /** The global tracer provider (a proxy) while no tracer provider was passed: whether it has a real delegate yet. */
  private readonly globalTracer: ProxyTracerProvider | undefined;
  /** Operations since the global meter provider was last looked up while nothing was registered. */
  private idleChecks = 0;

  constructor(options: OpenTelemetryOptions) {
    // The global tracer provider is a proxy: a provider registered after this call is used from then on.
    const tracerProvider = options.tracerProvider ?? traceApi.getTracerProvider();
    this.tracer = tracerProvider.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
    this.globalTracer = tracerProvider instanceof ProxyTracerProvider ? tracerProvider : undefined;
    this.globalMeter = options.meterProvider === undefined;
    this.useMeterProvider(options.meterProvider ?? metrics.getMeterProvider());
  }

  /**
   * Whether anything would be recorded now: a tracer provider (passed, or registered globally) or a meter provider
   * other than the API's no-op ones. When neither, the receiver skips this layer, and its trace objects, entirely.
   */
  enabled(): boolean {
    try {
      return this.recordsNow();
    } catch {
      return false; // a provider that throws records nothing, and never fails an operation
    }
  }

  private recordsNow(): boolean {
    if (this.globalTracer === undefined || this.globalTracer.getDelegate() !== NOOP_TRACER_PROVIDER) return true;
    if (this.instruments !== undefined) return true; // a real meter at the last look, looked up again as it records
    if (!this.globalMeter) return false;
    // Nothing registered at the last look. Looking the global meter provider up is the costly part of this check (the
    // API checks versions), so it is done every METER_LOOKUP_EVERY-th operation only: one registered later is seen
    // within a few deliveries.
    this.idleChecks = (this.idleChecks + 1) % METER_LOOKUP_EVERY;
    return this.idleChecks === 0 && this.currentInstruments() !== undefined;
  }

  around<O extends TracedOperation, R>(operation: O, trace: unknown, run: () => R): R {
    let span: Span | undefined;
    let parent: Context | undefined;
    try {
      parent = context.active();
      if (operation === 'receive') span = this.startDelivery(trace as ReceiveTrace, parent);
      else if (operation === 'handler') span = this.startHandler(trace as HandlerTrace, parent);
      else if (operation === 'store') span = this.startStore(trace as StoreTrace, parent);
      else if (operation === 'job') span = this.startJob(trace as JobTrace, parent);
      else if (operation === 'jwks') span = this.startJwks(trace as JwksTrace, parent);
      else if (operation === 'backfill') span = this.startBackfill(trace as BackfillTrace, parent);
      else if (operation === 'request') span = this.startRequest(trace as ClientRequestTrace, parent);
    } catch {
      span = undefined; // the layer never fails an operation of its own
    }
    // An operation this version does not know (a newer core's), or a span that could not start: run as it is, once.
    if (span === undefined || parent === undefined) return run();
    const opened: Span = span;
    const started = performance.now();
    let result: R;
    try {
      // A span with no valid context (the API's no-op tracer: no SDK registered) has nothing to pass on to children.
      result = isSpanContextValid(opened.spanContext()) ? context.with(traceApi.setSpan(parent, opened), run) : run();
    } catch (error) {
      this.finish(operation, opened, trace, started);
      throw error;
    }
    if (isThenable(result)) {
      // The core's own reaction, registered inside run, has filled the trace in by the time this one runs. One
      // native promise for this reaction and the caller: a lazy thenable runs again on each call of its `then`.
      const promise = Promise.resolve(result);
      const settle = () => this.finish(operation, opened, trace, started);
      promise.then(settle, settle);
      return promise as R;
    }
    this.finish(operation, opened, trace, started);
    return result;
  }

  private finish(operation: string, span: Span, trace: unknown, started: number): void {
    try {
      const seconds = (performance.now() - started) / 1000;
      if (operation === 'receive') this.endDelivery(span, trace as ReceiveTrace, seconds);
      else if (operation === 'handler') this.endHandler(span, trace as HandlerTrace);
      else if (operation === 'job') this.endJob(span, trace as JobTrace, seconds);
      else if (operation === 'jwks') this.endJwks(span, trace as JwksTrace);
      else if (operation === 'backfill') this.endBackfill(span, trace as BackfillTrace);
      else if (operation === 'request') this.endRequest(span, trace as ClientRequestTrace, seconds);
      else this.endStore(span, trace as StoreTrace, seconds);
    } catch {
      // A failing exporter or SDK must not turn into an unhandled rejection of the receiver's.
    }
  }

  private startDelivery(trace: ReceiveTrace, parent: Context): Span {
    const attributes: Attributes = {
      [A.messagingSystem]: MESSAGING_SYSTEM,
      [A.messagingOperationType]: 'process',
      [A.messagingOperationName]: 'process',
      [A.httpRequestMethod]: HTTP_METHODS.has(trace.method) ? trace.method : '_OTHER',
    };
    if (trace.deliveryAttempt !== undefined) attributes[A.deliveryAttempt] = trace.deliveryAttempt;
    return this.tracer.startSpan(UNAUTHENTICATED_SPAN_NAME, { kind: SpanKind.CONSUMER, attributes }, parent);
  }

  private endDelivery(span: Span, trace: ReceiveTrace, seconds: number): void {
    const { status, code, eventType } = trace;
    const outcome = status === undefined || status >= 500 ? 'failed' : status >= 400 ? 'rejected' : 'accepted';
    // The same small set on the span and on every metric: outcome, code, status, the type once authenticated.
    const shared: Attributes = { [A.outcome]: outcome };
    if (status !== undefined) shared[A.httpResponseStatusCode] = status;
    if (code !== undefined) shared[A.code] = code;
    if (eventType !== undefined) shared[A.cloudEventsEventType] = eventType;
    if (outcome !== 'accepted') {
      // Our rejection code; a delivery that threw before it was answered has its error's type.
      shared[A.errorType] = code ?? ('error' in trace ? errorTypeOf((trace as { error?: unknown }).error) : '_OTHER');
    }
    this.recordDelivery(shared, seconds, trace.deliveryAttempt, trace.signedAt);

    if (span.isRecording()) {
      span.setAttributes(shared);
      // Set only once the delivery was authenticated (the core leaves them out otherwise): ids on the span only.
      if (trace.eventId !== undefined) {
        span.setAttribute(A.messagingMessageId, trace.eventId);
        span.setAttribute(A.cloudEventsEventId, trace.eventId);
      }
      if (trace.streamId !== undefined) span.setAttribute(A.cloudEventsEventSubject, trace.streamId);
      if (trace.seq !== undefined) span.setAttribute(A.seq, trace.seq);
      if (trace.apiVersion !== undefined) span.setAttribute(A.apiVersion, trace.apiVersion);
      if (eventType !== undefined) span.updateName(`process ${eventType}`);
    }
    // A 5xx is the receiver's own failure, which the service retries: an error. A 4xx refuses a bad or early
    // delivery (forged, malformed, in progress elsewhere): the sender's fault, as HTTP server spans leave it unset.
    if (outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: shared[A.errorType] as string });
    span.end();
  }

  private recordDelivery(
    attributes: Attributes,
    seconds: number,
    attempt: number | undefined,
    signedAt: number | undefined,
  ): void {
    const instruments = this.currentInstruments();
    if (!instruments) return;
    instruments.deliveries.add(1, attributes);
    instruments.processDuration.record(seconds, attributes);
    if (attempt !== undefined) instruments.deliveryAttempt.record(attempt, attributes);
    // Against this machine's clock: a negative lag (a clock ahead of ours, within the signature's skew) counts as 0.
    if (signedAt !== undefined) instruments.deliveryLag.record(Math.max(0, Date.now() / 1000 - signedAt), attributes);
  }

  private startHandler(trace: HandlerTrace, parent: Context): Span {
    const attributes: Attributes = { [A.handler]: trace.handler };
    // An onUnauthenticated handler's event is what the sender wrote: a forged body must not set event attributes.
    if (trace.unauthenticated !== true) {
      attributes[A.cloudEventsEventType] = trace.eventType;
      attributes[A.cloudEventsEventId] = trace.eventId;
    }
    return this.tracer.startSpan(
      `handler ${trace.handler}`,
      {
        kind: SpanKind.INTERNAL,
        attributes,
      },
      parent,
    );
  }

  private endHandler(span: Span, trace: HandlerTrace): void {
    if ('error' in trace) recordFailure(span, errorTypeOf(trace.error));
    span.end();
  }

  private startStore(trace: StoreTrace, parent: Context): Span {
    // INTERNAL: the store is the receiver's contract (memory, Redis, SQL); the driver's own instrumentation makes the
    // CLIENT spans, as children of this one. No db.* attributes: the database is not known here.
    return this.tracer.startSpan(
      trace.operation,
      { kind: SpanKind.INTERNAL, attributes: { [A.storeOperation]: trace.operation } },
      parent,
    );
  }

  private endStore(span: Span, trace: StoreTrace, seconds: number): void {
    const attributes: Attributes = { [A.storeOperation]: trace.operation, [A.storeOutcome]: 'ok' };
    if ('error' in trace) {
      const type = errorTypeOf(trace.error);
      attributes[A.storeOutcome] = 'error';
      attributes[A.errorType] = type;
      recordFailure(span, type);
    }
    span.end();
    this.currentInstruments()?.storeDuration.record(seconds, attributes);
  }

  /**
   * Queue mode: the active context (the delivery's span, as the receiver enqueues inside it) through the registered
   * propagator (W3C trace context with the SDK's defaults), for the job to carry to its worker.
   */
  inject(): Record<string, string> | undefined {
    const carrier: Record<string, string> = {};
    // Trace ids only: baggage (which any sender may set through a `baggage` header, and an app may fill with a session
    // or an e-mail address) would sit in the queue's storage, unencrypted, until the job is done.
    propagation.inject(propagation.deleteBaggage(context.active()), carrier);
    return Object.keys(carrier).length > 0 ? carrier : undefined;
  }

  private startJob(trace: JobTrace, parent: Context): Span {
    // The worker's own trace, linked to the delivery that enqueued the job (the messaging conventions' link from a
    // process span to its message's creation context): the delivery span ended long ago, perhaps in another process.
    const links: Link[] = [];
    if (trace.carrier) {
      const linked = traceApi.getSpanContext(propagation.extract(ROOT_CONTEXT, trace.carrier));
      if (linked && isSpanContextValid(linked)) links.push({ context: linked });
    }
    const attributes: Attributes = {
      [A.messagingSystem]: MESSAGING_SYSTEM,
      [A.messagingOperationType]: 'process',
      [A.messagingOperationName]: 'process',
      [A.messagingDestinationName]: trace.queue,
      [A.messagingMessageId]: trace.eventId,
      [A.cloudEventsEventId]: trace.eventId,
      [A.cloudEventsEventType]: trace.eventType,
      [A.cloudEventsEventSubject]: trace.streamId,
      [A.seq]: trace.seq,
      [A.jobAttempt]: trace.attempt,
    };
    // A root of its own even when an in-process worker runs the job inside the delivery's context (the memory queue).
    const root = traceApi.deleteSpan(parent);
    return this.tracer.startSpan(`process ${trace.eventType}`, { kind: SpanKind.CONSUMER, attributes, links }, root);
  }

  private endJob(span: Span, trace: JobTrace, seconds: number): void {
    const failed = 'error' in trace;
    const attributes: Attributes = {
      [A.messagingDestinationName]: trace.queue,
      [A.cloudEventsEventType]: trace.eventType,
      [A.jobOutcome]: failed ? 'failed' : 'done',
    };
    if (trace.code !== undefined) attributes[A.code] = trace.code;
    if (failed) {
      const type = trace.code ?? errorTypeOf(trace.error);
      attributes[A.errorType] = type;
      recordFailure(span, type);
    }
    if (span.isRecording()) span.setAttributes(attributes);
    span.end();
    const instruments = this.currentInstruments();
    if (!instruments) return;
    instruments.jobs.add(1, attributes);
    instruments.jobDuration.record(seconds, attributes);
    const waited = (Date.now() - seconds * 1000 - trace.enqueuedAt) / 1000;
    instruments.jobWait.record(Math.max(0, waited), {
      [A.messagingDestinationName]: trace.queue,
      [A.cloudEventsEventType]: trace.eventType,
    });
  }

  private startJwks(trace: JwksTrace, parent: Context): Span {
    // An HTTP CLIENT span as the conventions name one, "{method} {url.template}" (the runtime's fetch may add its own
    // child): the template is the JWKS URL's path, one per receiver. `trace.url` comes without credentials or query.
    const attributes: Attributes = { [A.httpRequestMethod]: 'GET', [A.urlFull]: trace.url };
    const path = addServer(attributes, trace.url)?.pathname;
    if (path !== undefined) attributes[A.urlTemplate] = path;
    const name = path === undefined ? 'GET' : `GET ${path}`;
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  private endJwks(span: Span, trace: JwksTrace): void {
    const attributes: Attributes = { [A.jwksOutcome]: 'error' in trace ? 'error' : 'ok' };
    if (trace.status !== undefined) span.setAttribute(A.httpResponseStatusCode, trace.status);
    if (trace.keys !== undefined) span.setAttribute(A.jwksKeys, trace.keys);
    if ('error' in trace) {
      // A status other than 200 is its own type, as the HTTP conventions record it.
      const type = trace.status !== undefined && trace.status !== 200 ? String(trace.status) : errorTypeOf(trace.error);
      attributes[A.errorType] = type;
      recordFailure(span, type);
    }
    span.end();
    this.currentInstruments()?.jwksFetches.add(1, attributes);
  }

  private startBackfill(trace: BackfillTrace, parent: Context): Span {
    return this.tracer.startSpan(
      'backfill',
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [A.cloudEventsEventSubject]: trace.streamId,
          [A.cloudEventsEventType]: trace.eventType,
          [A.seq]: trace.seq,
          [A.backfillFromSeq]: trace.fromSeq,
        },
      },
      parent,
    );
  }

  private endBackfill(span: Span, trace: BackfillTrace): void {
    const filled = trace.filled ?? 0;
    span.setAttribute(A.backfillFilled, filled);
    if (trace.code !== undefined) span.setAttribute(A.code, trace.code);
    const failed = 'error' in trace || trace.code !== undefined;
    if (failed) recordFailure(span, trace.code ?? errorTypeOf(trace.error));
    span.end();
    const instruments = this.currentInstruments();
    // Under enforce a gap is not reported but filled: each backfill is a gap seen.
    instruments?.gaps.add(1, { [A.gapKind]: 'gap', [A.orderingMode]: 'enforce' });
    if (filled > 0) instruments?.backfilledEvents.add(filled, { [A.cloudEventsEventType]: trace.eventType });
  }

  private startRequest(trace: ClientRequestTrace, parent: Context): Span {
    // An HTTP CLIENT span as the conventions name it: "{method} {url.template}", one per attempt.
    const attributes = requestAttributes(trace);
    attributes[A.urlTemplate] = trace.route;
    // The span only: the ids in it would make a metric's attributes unbounded.
    if (trace.url !== undefined) attributes[A.urlFull] = trace.url;
    if (trace.attempt > 1) attributes[A.httpRequestResendCount] = trace.attempt - 1;
    return this.tracer.startSpan(`${trace.method} ${trace.route}`, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  private endRequest(span: Span, trace: ClientRequestTrace, seconds: number): void {
    const attributes = requestAttributes(trace);
    attributes[A.urlTemplate] = trace.route;
    if (trace.status !== undefined) attributes[A.httpResponseStatusCode] = trace.status;
    // As HTTP client spans: a 4xx or 5xx answer is an error, its status the type; so is a failure with no answer.
    const failed = 'error' in trace || (trace.status !== undefined && trace.status >= 400);
    if (failed) {
      const type = 'error' in trace ? errorTypeOf(trace.error) : String(trace.status);
      attributes[A.errorType] = type;
      recordFailure(span, type);
    }
    if (span.isRecording()) span.setAttributes(attributes);
    span.end();
    this.currentInstruments()?.clientRequestDuration.record(seconds, attributes);
  }

  /** Ordering: counts a gap, a late event or an unfillable seq by kind and mode (its ids stay in the log line). */
  streamGap(report: StreamGapReport): void {
    this.currentInstruments()?.gaps.add(1, { [A.gapKind]: report.kind, [A.orderingMode]: report.mode });
  }

  /** Queue mode: counts a blocked stream by the failure's type (never its ids, which stay in the log line). */
  streamBlocked(report: StreamBlockedReport): void {
    this.currentInstruments()?.streamsBlocked.add(1, { [A.errorType]: errorTypeOf({ code: report.error }) });
  }

  private currentInstruments(): Instruments | undefined {
    if (this.globalMeter) {
      const provider = metrics.getMeterProvider();
      if (provider !== this.meterProvider) this.useMeterProvider(provider);
    }
    return this.instruments;
  }

  private useMeterProvider(provider: MeterProvider): void {
    this.meterProvider = provider;
    const meter = provider.getMeter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
    // The API's no-op meter (no SDK registered): nothing to record, and `enabled` may say so.
    this.instruments = meter === createNoopMeter() ? undefined : instrumentsOf(meter);
  }
}

/** While no provider is registered, how often `enabled()` looks the global meter provider up again (operations). */
const METER_LOOKUP_EVERY = 64;

/** What the global proxy delegates to while no tracer provider is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

export { errorTypeOf };
