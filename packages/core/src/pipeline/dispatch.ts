import type { ReleasedAnswers } from '../events/released-answers.js';
import type { AttestationClaims } from '../verify/attestation.js';
import type { Envelope } from '../events/envelope.js';
import type { ApiVersion } from './api-version.js';
import { TRACING_CHANNELS, tracingChannelsOf, type HandlerTrace } from '../telemetry/channels.js';
import { Observers, type ReceiverTelemetry } from '../telemetry/observers.js';
import type { KnownEventType, KybEvent, UnknownKybEvent } from '../events/events.js';

/**
 * How a delivery was authenticated. Handlers registered with `on`, `onAny` and `onUnknown` only ever see
 * authenticated events: by the HMAC (the whole body), by an attestation (its claims), or both.
 */
export interface DeliveryAuthentication {
  /**
   * The secret version (`kv`) whose HMAC matched, or `null` when the receiver has no secrets configured. With an
   * HMAC the whole body is authenticated; without one only the attestation's claims (and the envelope fields bound
   * to them, see the README's security model) are: read released values from `claims`, not from `event.data`.
   */
  hmac: { version: string } | null;
  /** Whether an attestation was verified (always true for attested event types). */
  attestation: boolean;
  /**
   * Set when the event was not delivered by webhook but fetched from the KYB API to fill a gap in its stream
   * (`ordering.mode: 'enforce'`): the API call is authenticated by your API key, so `hmac` is null without the event
   * being unauthenticated; attested events were verified all the same.
   */
  fetched?: true;
}

/** What a handler learns besides the event itself. */
export interface BaseHandlerContext {
  authentication: DeliveryAuthentication;
  /** The verified attestation claims, when the event carried one. */
  claims: AttestationClaims | undefined;
  /** `Service-Delivery-Attempt`, starting at 1, when the header was present and numeric. */
  deliveryAttempt: number | undefined;
  /**
   * The event's `api_version` (`YYYY-MM-DD`), from the signed body (the `Service-Kyb-Api-Version` header is not
   * authenticated): branch on it when a version changes what a field means, e.g. `apiVersion >= '2026-06-01'`.
   */
  apiVersion: ApiVersion;
  /**
   * Aborted when the handler passed the receiver's `handlerTimeoutMs`: the delivery has then been answered 503
   * `handler_timeout` and will be retried. Pass it to your database and HTTP calls so that a stuck handler stops.
   */
  readonly signal: AbortSignal;
  /** Set when a queue worker runs the handlers (queue mode, docs/queue-mode.md); absent for a delivery run inline. */
  job?: JobInfo;
}

/**
 * The queue job a worker runs the handlers for (see {@link BaseHandlerContext.job}).
 *
 * @example
 * ```ts
 * receiver.onAny((event, { job }) => { if (job && job.attempt > 1) log.info(`retry ${job.attempt} of ${event.event_id}`) })
 * ```
 */
export interface JobInfo {
  /** The queue's id for the job. */
  id: string;
  /** 1 for the first run, 2 for the first retry, and so on. */
  attempt: number;
  /** When the receiver enqueued it (ms since the epoch). */
  enqueuedAt: number;
}

/** Context of event type `T`: attested types always have `claims`; releases have `answers`. */
export type HandlerContext<T extends string = string> = BaseHandlerContext &
  (T extends 'kyb.data_request.released' | 'kyb.business.wallet_address_changed'
    ? { claims: AttestationClaims }
    : unknown) &
  (T extends 'kyb.data_request.released' ? { answers: ReleasedAnswers } : unknown);

/** A handler for event type `T`. Throwing (or rejecting) makes the delivery fail with 500 so the service retries. */
export type EventHandler<T extends KnownEventType> = (event: KybEvent<T>, context: HandlerContext<T>) => unknown;
/** A handler for every verified event, known type or not. */
export type AnyEventHandler = (event: KybEvent | UnknownKybEvent, context: HandlerContext) => unknown;
/** A handler for verified events of types this library version does not know. */
export type UnknownEventHandler = (event: UnknownKybEvent, context: HandlerContext) => unknown;

/**
 * What an `onUnauthenticated` handler learns: nothing about the event is authenticated, so there are no claims and
 * no verified HMAC, and the event may be forged, repeated or reordered.
 */
export interface UnauthenticatedContext {
  authentication: { hmac: null; attestation: false };
  /** `Service-Delivery-Attempt` as sent, when present and numeric; unauthenticated like the rest. */
  deliveryAttempt: number | undefined;
  /** Aborted when the handler passed `handlerTimeoutMs` (see {@link BaseHandlerContext.signal}). */
  readonly signal: AbortSignal;
}

/**
 * A handler for deliveries that carry no attestation while the receiver has no HMAC `secrets` (attestation-only
 * mode, spec 5.4): nothing authenticates them, so they are never deduped, never stored, and never reach `on`,
 * `onAny` or `onUnknown`. Treat the event as an unverified hint (e.g. refresh state from the API).
 */
export type UnauthenticatedEventHandler = (event: UnknownKybEvent, context: UnauthenticatedContext) => unknown;

/**
 * The abort controller of each context, made only when a handler reads `signal` or the deadline passes, so deliveries
 * whose handlers never look at it pay nothing for it. A WeakMap rather than a private field: a private field needs the
 * class's field initializer to run for every context, which a new process pays in its first deliveries.
 */
const controllers = new WeakMap<DeliveryContext, AbortController>();

function controllerOf(context: DeliveryContext): AbortController {
  let controller = controllers.get(context);
  if (controller === undefined) controllers.set(context, (controller = new AbortController()));
  return controller;
}

/**
 * The context object a delivery's handlers share.
 *
 * The fields are declared and assigned in the constructor rather than written as class fields: a class field is
 * defined by an initializer (an own-property definition each), assignments are plain stores, and the object has the
 * same own properties in the same order either way (about 500 instructions per delivery in a new process, Node 24).
 */
export class DeliveryContext {
  declare readonly authentication: DeliveryAuthentication;
  declare readonly claims: AttestationClaims | undefined;
  declare readonly deliveryAttempt: number | undefined;
  declare readonly apiVersion: ApiVersion;
  declare answers?: ReleasedAnswers;
  declare job?: JobInfo;

  constructor(
    authentication: DeliveryAuthentication,
    claims: AttestationClaims | undefined,
    deliveryAttempt: number | undefined,
    apiVersion: string,
  ) {
    this.authentication = authentication;
    this.claims = claims;
    this.deliveryAttempt = deliveryAttempt;
    // Date-shaped by the envelope schema.
    this.apiVersion = apiVersion as ApiVersion;
    this.answers = undefined;
    this.job = undefined;
  }

  get signal(): AbortSignal {
    return controllerOf(this).signal;
  }

  /** Aborts the context's signal; receiver-only (a static method, so handlers do not see it on the context). */
  static abort(context: DeliveryContext, reason: unknown): void {
    controllerOf(context).abort(reason);
  }
}

/**
 * A handler failure (or a handler that passed `handlerTimeoutMs`), given to `onError` handlers.
 *
 * @example
 * ```ts
 * receiver.onError((error) => logger.error({ type: error.eventType, id: error.eventId, causes: error.errors }, error.message))
 * ```
 */
export class HandlerError extends Error {
  override readonly name = 'HandlerError';
  constructor(
    readonly eventType: string,
    readonly eventId: string,
    readonly errors: unknown[],
  ) {
    super(`${errors.length} handler(s) failed for ${eventType} ${eventId}`, { cause: errors[0] });
  }
}

/** The handler registry of a receiver. */
export class HandlerRegistry {
  private readonly byType = new Map<string, AnyEventHandler[]>();
  private readonly any: AnyEventHandler[] = [];
  private readonly unknown: UnknownEventHandler[] = [];
  readonly unauthenticated: UnauthenticatedEventHandler[] = [];
  readonly error: ((error: HandlerError) => unknown)[] = [];
  /**
   * The handlers each registered type runs, worked out once per type instead of once per delivery. Only types
   * registered with `on` get an entry, so the cache is as small as the registrations: event types a sender invents
   * share the two lists below and can never grow memory.
   */
  private readonly resolved = new Map<string, readonly AnyEventHandler[]>();
  private forUnregisteredKnown: readonly AnyEventHandler[] | undefined;
  /** Who watches handler runs: the handler channel, and the receiver's `telemetry`. */
  private readonly observers: Observers<'handler'>;

  constructor(telemetry?: ReceiverTelemetry) {
    this.observers = new Observers('handler', handlerChannels, telemetry);
  }
  private forUnregisteredUnknown: readonly AnyEventHandler[] | undefined;

  add(type: string, handler: AnyEventHandler): void {
    const list = this.byType.get(type);
    if (list) list.push(handler);
    else this.byType.set(type, [handler]);
    this.forget();
  }

  addAny(handler: AnyEventHandler): void {
    this.any.push(handler);
    this.forget();
  }

  addUnknown(handler: UnknownEventHandler): void {
    this.unknown.push(handler);
    this.forget();
  }

  private forget(): void {
    this.resolved.clear();
    this.forUnregisteredKnown = undefined;
    this.forUnregisteredUnknown = undefined;
  }

  /** `onUnknown` handlers run only for types this library version does not know. */
  private handlersFor(type: string, known: boolean): readonly AnyEventHandler[] {
    // The cache first: one map lookup per delivery of a registered type, not two.
    const resolved = this.resolved.get(type);
    if (resolved) return resolved;
    const registered = this.byType.get(type);
    if (registered) {
      const handlers = [...registered, ...this.any, ...(known ? [] : (this.unknown as AnyEventHandler[]))];
      this.resolved.set(type, handlers);
      return handlers;
    }
    if (known) return (this.forUnregisteredKnown ??= [...this.any]);
    return (this.forUnregisteredUnknown ??= [...this.any, ...(this.unknown as AnyEventHandler[])]);
  }

  /**
   * Runs every handler for the event at once. With one handler (the common case) its own result is returned as
   * is, so a synchronous handler costs no promise; the caller awaits a thenable and wraps a failure in a
   * {@link HandlerError}. With several, waits for all of them, so one failing handler does not leave another
   * half-done without the receiver knowing, and rejects with a {@link HandlerError} listing every failure.
   */
  run(event: Envelope, context: HandlerContext, known: boolean): unknown {
    return this.runList(this.handlersFor(event.event, known), event, context);
  }

  /** Runs the `onUnauthenticated` handlers, like {@link run}. */
  runUnauthenticated(event: Envelope, context: UnauthenticatedContext): unknown {
    return this.runList(
      this.unauthenticated as unknown as AnyEventHandler[],
      event,
      context as unknown as HandlerContext,
      true,
    );
  }

  private runList(
    handlers: readonly AnyEventHandler[],
    event: Envelope,
    context: HandlerContext,
    unauthenticated = false,
  ): unknown {
    if (handlers.length === 0) return undefined;
    if (handlers.length === 1) return this.runOne(handlers[0]!, event, context, unauthenticated);
    return this.runAll(handlers, event, context, unauthenticated);
  }

  /** Runs one handler, watched while anyone watches. */
  private runOne(
    handler: AnyEventHandler,
    event: Envelope,
    context: HandlerContext,
    unauthenticated: boolean,
  ): unknown {
    if (!this.observers.active) return handler(event as UnknownKybEvent, context);
    const trace: HandlerTrace = {
      eventId: event.event_id,
      eventType: event.event,
      handler: handler.name || '<anonymous>',
    };
    if (unauthenticated) trace.unauthenticated = true;
    return this.observers.run(trace, () => handler(event as UnknownKybEvent, context));
  }

  private async runAll(
    handlers: readonly AnyEventHandler[],
    event: Envelope,
    context: HandlerContext,
    unauthenticated: boolean,
  ): Promise<void> {
    const outcomes = await Promise.allSettled(
      handlers.map(async (handler) => this.runOne(handler, event, context, unauthenticated)),
    );
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    if (failures.length > 0) throw new HandlerError(event.event, event.event_id, failures);
  }
}

// The `kyb-webhooks:handler` tracing channel (telemetry/channels.ts), looked up once per process.
const handlerChannels = tracingChannelsOf(TRACING_CHANNELS.handler);
