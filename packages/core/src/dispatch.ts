import type { ReleasedAnswers } from './answers.js';
import type { AttestationClaims } from './attestation.js';
import type { Envelope } from './envelope.js';
import type { KnownEventType, KybEvent, UnknownKybEvent } from './events.js';

/** How a delivery was authenticated. */
export interface DeliveryAuthentication {
  /** The secret version (`kv`) whose HMAC matched, or `null` when the receiver has no secrets configured. */
  hmac: { version: string } | null;
  /** Whether an attestation was verified (always true for attested event types). */
  attestation: boolean;
}

/** What a handler learns besides the event itself. */
export interface BaseHandlerContext {
  authentication: DeliveryAuthentication;
  /** The verified attestation claims, when the event carried one. */
  claims: AttestationClaims | undefined;
  /** `Service-Delivery-Attempt`, starting at 1, when the header was present and numeric. */
  deliveryAttempt: number | undefined;
}

/** Context of event type `T`: attested types always have `claims`; releases have `answers`. */
export type HandlerContext<T extends string = string> = BaseHandlerContext &
  (T extends 'kyb.data_request.released' | 'kyb.business.wallet_address_changed' ? { claims: AttestationClaims } : unknown) &
  (T extends 'kyb.data_request.released' ? { answers: ReleasedAnswers } : unknown);

/** A handler for event type `T`. Throwing (or rejecting) makes the delivery fail with 500 so the service retries. */
export type EventHandler<T extends KnownEventType> = (event: KybEvent<T>, context: HandlerContext<T>) => unknown;
/** A handler for every verified event, known type or not. */
export type AnyEventHandler = (event: KybEvent | UnknownKybEvent, context: HandlerContext) => unknown;
/** A handler for verified events of types this library version does not know. */
export type UnknownEventHandler = (event: UnknownKybEvent, context: HandlerContext) => unknown;

/** A handler failure, given to `onError` handlers. */
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
  readonly error: ((error: HandlerError) => unknown)[] = [];
  /** The handlers each event type runs, worked out once per type instead of once per delivery. */
  private readonly resolved = new Map<string, readonly AnyEventHandler[]>();

  add(type: string, handler: AnyEventHandler): void {
    const list = this.byType.get(type);
    if (list) list.push(handler);
    else this.byType.set(type, [handler]);
    this.resolved.clear();
  }

  addAny(handler: AnyEventHandler): void {
    this.any.push(handler);
    this.resolved.clear();
  }

  addUnknown(handler: UnknownEventHandler): void {
    this.unknown.push(handler);
    this.resolved.clear();
  }

  private handlersFor(type: string, known: boolean): readonly AnyEventHandler[] {
    let handlers = this.resolved.get(type);
    if (!handlers) {
      handlers = [...(this.byType.get(type) ?? []), ...this.any, ...(known ? [] : (this.unknown as AnyEventHandler[]))];
      this.resolved.set(type, handlers);
    }
    return handlers;
  }

  /**
   * Runs every handler for the event at once. With one handler (the common case) its own result is returned as
   * is, so a synchronous handler costs no promise; the caller awaits a thenable and wraps a failure in a
   * {@link HandlerError}. With several, waits for all of them, so one failing handler does not leave another
   * half-done without the receiver knowing, and rejects with a {@link HandlerError} listing every failure.
   */
  run(event: Envelope, context: HandlerContext, known: boolean): unknown {
    const handlers = this.handlersFor(event.event, known);
    if (handlers.length === 0) return undefined;
    if (handlers.length === 1) return handlers[0]!(event as UnknownKybEvent, context);
    return this.runAll(handlers, event, context);
  }

  private async runAll(handlers: readonly AnyEventHandler[], event: Envelope, context: HandlerContext): Promise<void> {
    const outcomes = await Promise.allSettled(handlers.map(async (handler) => handler(event as UnknownKybEvent, context)));
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    if (failures.length > 0) throw new HandlerError(event.event, event.event_id, failures);
  }
}
