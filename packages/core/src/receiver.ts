import { answersFromClaims, type ReleasedAnswers } from './answers.js';
import { createAttestationVerifier, type AttestationClaims, type AttestationOptions } from './attestation.js';
import type { PlatformCrypto } from './crypto/types.js';
import { typeBindingOf } from './attestation-binding.js';
import { DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_STORE_TIMEOUT_MS, validateReceiverOptions } from './config.js';
import { checkClaimResult, DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, type ClaimResult, type DedupeStore } from './dedupe.js';
import { isThenable, settleWithin, TIMED_OUT } from './deadline.js';
import {
  DeliveryContext,
  HandlerError,
  HandlerRegistry,
  type AnyEventHandler,
  type DeliveryAuthentication,
  type EventHandler,
  type HandlerContext,
  type UnauthenticatedContext,
  type UnauthenticatedEventHandler,
  type UnknownEventHandler,
} from './dispatch.js';
import { envelopeSchema, type Envelope } from './envelope.js';
import { handlerTypes } from './handler-types.js';
import { createConsoleLogger } from './console-logger.js';
import { createValidator, type ValidationResult } from './schema-guard.js';
import { ERRORS, KybWebhookError, rejection, type ErrorCode } from './errors.js';
import { ATTESTED_EVENT_TYPES, eventDataSchemas, type KnownEventType, type KybEvent, type UnknownKybEvent } from './events.js';
import { readHeader, type HeadersInput } from './headers.js';
import { safeLog, type Logger } from './logger.js';
import { createMemoryStore, settlesPromptly } from './memory-store.js';
import { createOrderedReceive, type GapHandler, type OrderedItem, type OrderingMode, type OrderingOptions } from './ordering.js';
import { replayFetched, type ReplayOptions } from './replay.js';
import { isStreamCursorStore } from './stream-store.js';
import { createSignatureCheck, type SecretKeyring, type VerifiedSignature } from './signature.js';

/** Options of {@link createReceiver}. At least one of `secrets` and `attestation` is required. */
export interface ReceiverOptions {
  /**
   * HMAC secrets by version (`kv`), each a string or `{ secret, notAfter }`. When set, every delivery must carry a
   * valid `Service-KYB-Signature`. During the 24-hour overlap after a rotation, configure both versions and give
   * the old one `notAfter`.
   */
  secrets?: SecretKeyring;
  /** The attestation check (the trust boundary of spec 5.4): issuer, audience and the KYB JWKS. */
  attestation?: AttestationOptions;
  /** Where processed event ids are kept. Default: an in-memory store (one process only). */
  store?: DedupeStore;
  /** Allowed skew of the signature timestamp, both ways, in seconds. Default 300 (spec 8). */
  toleranceSeconds?: number;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** How long one delivery may hold an event before another delivery may take over. Default 60 s. */
  leaseMs?: number;
  /** How long processed event ids are remembered. Default 30 days. */
  retainMs?: number;
  /**
   * How long handlers may run before the delivery is answered 503 `handler_timeout` (and retried). Default 30 s.
   * Past it the context's `signal` is aborted; a handler that ignores it keeps the event claimed until it ends or the
   * lease expires, and its late outcome still settles the claim. Must leave room in the lease:
   * `handlerTimeoutMs + 2 × storeTimeoutMs < leaseMs`.
   */
  handlerTimeoutMs?: number;
  /** How long one store call (claim, complete, release) may take before it counts as failed. Default 5 s. */
  storeTimeoutMs?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * Structured log hook; no secret, token or body content is ever passed to it. Default
   * {@link createConsoleLogger}: one readable line per rejection and failure on the console. `false` silences it.
   */
  logger?: Logger | false;
  /**
   * Per-stream order (design §7): `{ mode: 'off' | 'detect' | 'enforce', firstSeq?: 0 | 1, fetchEventsAfter? }`.
   * Default off: each delivery on its own, no cursor read or written. `'detect'` and `'enforce'` need a store with
   * stream cursors (every built-in store); `'enforce'` also needs `fetchEventsAfter`, e.g.
   * `(s, a) => client.events(s, { afterSeq: a })` with `@kyb-webhooks/client`. See {@link OrderingOptions}.
   */
  ordering?: OrderingOptions;
  /** @internal Crypto implementation override for tests of both paths. */
  crypto?: PlatformCrypto;
}

/** A delivery as an adapter hands it over. */
export interface ReceiveInput {
  /** HTTP method; when omitted the adapter vouches that it is POST. */
  method?: string;
  headers: HeadersInput;
  /** The raw body exactly as received. A string is taken as its UTF-8 bytes. */
  body: Uint8Array | ArrayBuffer | string;
}

/**
 * The JSON body the adapter sends back. `code: 'unauthenticated'` acknowledges a delivery that nothing could
 * authenticate (attestation-only receivers, an event without attestation): nothing was stored or processed.
 */
export type ResponseBody =
  | { received: true; code?: 'duplicate' | 'unauthenticated' | 'late' }
  | { error: { code: ErrorCode; message: string } };

/** What the adapter writes back: status, extra headers and a JSON body. */
export interface ReceiveResult {
  status: number;
  /**
   * `'duplicate'`, `'unauthenticated'`, `'late'` (ordering enforce: an event behind its stream's cursor that the
   * `onGap` handlers took) or a rejection code; absent for a first, successful delivery.
   */
  code?: ErrorCode | 'duplicate' | 'unauthenticated' | 'late';
  headers: Record<string, string>;
  body: ResponseBody;
  /** The verified event, once it got that far; never set for an unauthenticated delivery. */
  event?: KybEvent | UnknownKybEvent;
}

/**
 * A delivery that passed every check `receive` makes before dedupe: what {@link Receiver.verify} resolves with.
 *
 * @example
 * ```ts
 * const { event, authentication } = await receiver.verify({ headers, body })
 * if (event.event === 'kyb.data_request.released') queue.push(event) // your own dedupe and dispatch
 * ```
 */
export interface VerifiedDelivery {
  /** The verified event; its data validated for its type when the type is known. */
  event: KybEvent | UnknownKybEvent;
  /** What authenticated it: the HMAC version, the attestation, or both. */
  authentication: DeliveryAuthentication;
  /** The verified attestation claims, when the event carries an attestation. */
  claims: AttestationClaims | undefined;
  /** A release's answers keyed by subject and name (spec 2.6). */
  answers: ReleasedAnswers | undefined;
  /** `Service-Delivery-Attempt`, when present and valid. */
  deliveryAttempt: number | undefined;
}

/**
 * A webhook receiver: register handlers, then hand every delivery to `receive`.
 */
export interface Receiver {
  /**
   * Handle events of one type, or of each type in a list; the event and its context are typed by the names (with a
   * list, `event.event` narrows the union). Throws `config_invalid` for a handler that is not a function or a name
   * that is not an event type.
   *
   * @example
   * ```ts
   * receiver.on(['kyb.data_request.released', 'kyb.data_request.refused'], async (event) => {
   *   if (event.event === 'kyb.data_request.refused') return markRefused(event.stream_id, event.data.reason)
   *   await markReleased(event.stream_id, event.data.released_at)
   * })
   * ```
   */
  on<T extends KnownEventType>(type: T | readonly T[], handler: EventHandler<T>): Receiver;
  /** Handle every verified event. */
  onAny(handler: AnyEventHandler): Receiver;
  /** Handle verified events of types this library version does not know (new attested types appear unannounced). */
  onUnknown(handler: UnknownEventHandler): Receiver;
  /**
   * Handle deliveries that nothing authenticates: on a receiver without `secrets`, events that carry no attestation
   * (spec 5.4). They may be forged, are never deduped or stored, and never reach `on`, `onAny` or `onUnknown`.
   * Without such a handler they are acknowledged (200 `unauthenticated`) and dropped.
   */
  onUnauthenticated(handler: UnauthenticatedEventHandler): Receiver;
  /** Be told about handler failures and timeouts (the delivery also gets a 5xx and is retried). Not awaited. */
  onError(handler: (error: HandlerError) => unknown): Receiver;
  /**
   * With `ordering` on: be told about gaps and late events (see {@link GapReport}). Under `'detect'` a notification;
   * under `'enforce'` the only handler of a late event, awaited, and the delivery is answered 200 `late` only if every
   * `onGap` handler succeeded. Ignored with ordering off.
   */
  onGap(handler: GapHandler): Receiver;
  /** Verify, dedupe and dispatch one delivery. Never throws; every outcome is a result. */
  receive(input: ReceiveInput): Promise<ReceiveResult>;
  /**
   * Verification only, in one call, like Stripe's `constructEvent`: every check `receive` makes (limits, HMAC,
   * envelope, attestation and its binding, data schema), then the verified event. No dedupe, no store, no handlers,
   * no log entry. A refused delivery throws the {@link KybWebhookError} whose `code` `receive` would answer (its
   * status is `ERRORS[code].status`); an event nothing authenticates (no `secrets`, no attestation) throws
   * `attestation_missing`. Dedupe on `event.event_id` yourself: at-least-once delivery sends duplicates.
   *
   * @example
   * ```ts
   * try {
   *   const { event } = await receiver.verify({ method: 'POST', headers: req.headers, body: rawBody })
   *   await jobs.enqueueOnce(event.event_id, event)
   *   res.status(200).end()
   * } catch (error) {
   *   const code = error instanceof KybWebhookError ? error.code : 'internal_error'
   *   res.status(code === 'config_invalid' ? 500 : ERRORS[code].status).json({ error: { code } })
   * }
   * ```
   */
  verify(input: ReceiveInput): Promise<VerifiedDelivery>;
  /**
   * Run an event that YOU fetched from the authenticated KYB API (e.g. `client.events(requestId)`) through the same
   * pipeline as a delivery, minus the HMAC it cannot have: envelope, attestation (an attested type must carry one,
   * verified and bound), event data, then dedupe, ordering and handlers exactly as `receive` does. The result has the
   * shape of `receive`'s: 200 for processed, 200 `duplicate` when done before, 200 `late` (ordering enforce), or a
   * failure with its code (`handler_failed`, `in_progress`, `attestation_invalid`, …). Handlers see
   * `context.authentication.fetched === true` and no `deliveryAttempt`.
   *
   * Never pass it bytes that came from the network unauthenticated (a webhook body, a queue message anyone can
   * write): without an attestation nothing here proves such an event genuine. Those go through `receive`.
   * Never throws, except with the signal's reason when `options.signal` was aborted before the replay started.
   *
   * @example
   * ```ts
   * for await (const event of client.events(requestId, { afterSeq: 4 })) {
   *   const result = await receiver.replay(event)
   *   if (result.status !== 200) console.warn('still failing', event.seq, result.code)
   * }
   * ```
   */
  replay(event: unknown, options?: ReplayOptions): Promise<ReceiveResult>;
  /** The `ordering.mode` the receiver was created with (`'off'` when not set), e.g. for recovery to know where to replay from. */
  readonly orderingMode: OrderingMode;
  /**
   * The result for a delivery an adapter refuses before `receive` (body too large while streaming, body already
   * parsed by another middleware), logged like every other rejection.
   */
  reject(code: ErrorCode): ReceiveResult;
  /** The body limit, so adapters can stop reading early. */
  readonly maxBodyBytes: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
// Answers shared by every delivery, frozen so that no adapter or onResult hook can change another delivery's.
const NO_HEADERS: Record<string, string> = Object.freeze({});
const RECEIVED_BODY: ResponseBody = Object.freeze({ received: true });
const UNAUTHENTICATED_BODY: ResponseBody = Object.freeze({ received: true, code: 'unauthenticated' });
const UNAUTHENTICATED = Object.freeze({ hmac: null, attestation: false as const });
/** Handlers finished (or there were none). */
const HANDLED = 'handled';
/** How a handler run ended: finished, failed, or still running past its deadline. */
type HandlerOutcome = typeof HANDLED | HandlerError | { stillRunning: PromiseLike<unknown> };
const DUPLICATE_BODY: ResponseBody = Object.freeze({ received: true, code: 'duplicate' });
const LATE_BODY: ResponseBody = Object.freeze({ received: true, code: 'late' });
const RESPONSE_HEADERS: Partial<Record<ErrorCode, Record<string, string>>> = {
  method_not_allowed: Object.freeze({ allow: 'POST' }),
};
const utf8 = new TextDecoder('utf-8', { fatal: true });
const validateEnvelope = createValidator(envelopeSchema);
const dataValidators = new Map<string, (value: unknown) => ValidationResult<unknown>>(
  Object.entries(eventDataSchemas).map(([type, schema]) => [type, createValidator<unknown>(schema)]),
);
const encoder = new TextEncoder();

/**
 * Creates a receiver that runs every delivery through the pipeline of design §1: limits, signature header,
 * JSON parse of the verified bytes, envelope, attestation, dedupe, dispatch, settle. A 2xx is answered only once
 * the handlers succeeded (or had before, for a duplicate); everything a retry could cure gets a non-2xx.
 *
 * @example
 * ```ts
 * const receiver = createReceiver({
 *   secrets: { '3': process.env.KYB_SECRET_V3! },
 *   attestation: { issuer: 'https://kyb.example.com', audience: process.env.KYB_AUDIENCE!,
 *     jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json' },
 * })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => {
 *   await saveRelease(event.data.request_id, [...answers])
 * })
 * const result = await receiver.receive({ method: 'POST', headers, body })
 * ```
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  // Every mistake throws config_invalid here, at creation, naming the option and the fix (config.ts).
  validateReceiverOptions(options);
  const now = options.now ?? Date.now;
  const hasSecrets = options.secrets !== undefined;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  const storeTimeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  const checkSignature = hasSecrets
    ? createSignatureCheck({ secrets: options.secrets!, toleranceSeconds, now, crypto: options.crypto })
    : undefined;
  const verifyAttestation = options.attestation
    ? createAttestationVerifier(options.attestation, now, options.crypto)
    : undefined;
  const store = options.store ?? createMemoryStore({ now });
  // The built-in memory store answers at once; a deadline timer per call would be pure cost on the hot path.
  const storeSettlesPromptly = settlesPromptly(store);
  // Frozen once: the store only reads them, and a delivery need not allocate them again.
  const claimOptions = Object.freeze({ leaseMs });
  const completeOptions = Object.freeze({ retainMs });
  const logger = options.logger === false ? undefined : (options.logger ?? createConsoleLogger());
  const handlers = new HandlerRegistry();
  const gapHandlers: GapHandler[] = [];

  function reject(error: KybWebhookError | ErrorCode, envelope?: Envelope): ReceiveResult {
    const failure = typeof error === 'string' ? rejection(error) : error;
    const code = failure.code as ErrorCode;
    const { status, message } = ERRORS[code];
    if (logger) {
      safeLog(logger, {
        level: status >= 500 ? 'error' : 'warn',
        message: `delivery rejected: ${code}`,
        code,
        status,
        eventId: envelope?.event_id,
        eventType: envelope?.event,
        detail: failure.detail,
        error: failure.cause,
      });
    }
    return {
      status,
      code,
      headers: RESPONSE_HEADERS[code] ?? NO_HEADERS,
      body: { error: { code, message } },
    };
  }

  /** Calls the store within storeTimeoutMs; a synchronous throw, a rejection and a timeout all throw. */
  async function callStore<T>(operation: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>> {
    const pending = call();
    const answer = storeSettlesPromptly ? await pending : await settleWithin(pending, storeTimeoutMs);
    if (answer === TIMED_OUT) throw new StoreTimeoutError(operation, storeTimeoutMs, pending);
    return answer as Awaited<T>;
  }

  async function claimWithin(dedupeKey: string): Promise<ClaimResult> {
    try {
      return checkClaimResult(await callStore('claim', () => store.claim(dedupeKey, claimOptions)));
    } catch (error) {
      if (error instanceof StoreTimeoutError) {
        // A claim that lands after we gave up would hold the event for a whole lease: hand it back.
        Promise.resolve(error.pending).then(
          (late) => {
            const token = (late as { status?: unknown; token?: unknown } | null)?.token;
            if ((late as { status?: unknown } | null)?.status === 'acquired' && typeof token === 'string') {
              callStore('release', () => store.release(dedupeKey, token)).catch(() => {});
            }
          },
          () => {},
        );
      }
      throw error;
    }
  }

  /** Records a success. If that fails the handlers still succeeded: the delivery is acknowledged all the same. */
  async function settleSuccess(dedupeKey: string, token: string, envelope: Envelope, late: boolean): Promise<void> {
    const where = { eventId: envelope.event_id, eventType: envelope.event };
    try {
      const completed = await callStore('complete', () => store.complete(dedupeKey, token, completeOptions));
      if (completed === false) {
        safeLog(logger, { level: 'warn', message: 'the lease expired before the handlers finished; raise leaseMs above your slowest handler', ...where });
      } else if (completed !== true) {
        safeLog(logger, { level: 'error', message: 'the store answered complete() with something other than a boolean', code: 'store_unavailable', ...where });
      } else if (late) {
        safeLog(logger, { level: 'warn', message: 'a handler that passed handlerTimeoutMs finished later; its success was recorded', ...where });
      }
    } catch (error) {
      safeLog(logger, { level: 'error', message: `complete failed after the handlers succeeded: ${storeFailure('complete', error)}`, code: 'store_unavailable', ...where, error });
    }
  }

  /** Frees the claim after a failure, so that the service's retry runs the handlers again. */
  async function settleFailure(dedupeKey: string, token: string, envelope: Envelope): Promise<void> {
    try {
      const released = await callStore('release', () => store.release(dedupeKey, token));
      if (typeof released !== 'boolean') throw new TypeError('the store answered release() with something other than a boolean');
    } catch (error) {
      safeLog(logger, { level: 'error', message: 'release failed; the event stays claimed until its lease expires', code: 'store_unavailable', eventId: envelope.event_id, eventType: envelope.event, error });
    }
  }

  function notifyError(error: HandlerError): void {
    for (const onError of handlers.error) {
      // Notifications: never awaited (a hanging onError must not hang the delivery), their failures change nothing.
      try {
        const pending = onError(error);
        if (isThenable(pending)) pending.then(undefined, () => {});
      } catch {
        // ignored, as above
      }
    }
  }

  /**
   * Runs handlers within handlerTimeoutMs. A synchronous handler costs no timer. Past the deadline the context's
   * signal is aborted and the still-running work is handed back, so the caller can settle the claim when it ends.
   */
  async function runHandlers(run: () => unknown, context: DeliveryContext, envelope: Envelope): Promise<HandlerOutcome> {
    let pending: unknown;
    try {
      pending = run();
      if (!isThenable(pending)) return HANDLED;
      if ((await settleWithin(pending, handlerTimeoutMs)) !== TIMED_OUT) return HANDLED;
    } catch (error) {
      const failure = error instanceof HandlerError ? error : new HandlerError(envelope.event, envelope.event_id, [error]);
      notifyError(failure);
      return failure;
    }
    const reason = new DOMException(`the handler did not finish within handlerTimeoutMs (${handlerTimeoutMs} ms)`, 'TimeoutError');
    DeliveryContext.abort(context, reason);
    notifyError(new HandlerError(envelope.event, envelope.event_id, [reason]));
    return { stillRunning: pending as PromiseLike<unknown> };
  }

  /**
   * Attestation-only receivers (no `secrets`) cannot authenticate an event without an attestation. It is answered
   * 200 `unauthenticated` so that the service neither retries it for hours nor holds the stream behind it, but it
   * never touches the store, never reaches `on`/`onAny`/`onUnknown`, and runs only `onUnauthenticated` handlers.
   */
  async function receiveUnauthenticated(envelope: Envelope, input: ReceiveInput): Promise<ReceiveResult> {
    if (handlers.unauthenticated.length > 0) {
      const context = new DeliveryContext(UNAUTHENTICATED, undefined, parseAttempt(readHeader(input.headers, 'service-delivery-attempt')));
      const outcome = await runHandlers(() => handlers.runUnauthenticated(envelope, context as unknown as UnauthenticatedContext), context, envelope);
      if (outcome instanceof HandlerError) return reject(rejection('handler_failed', undefined, outcome), envelope);
      if (outcome !== HANDLED) {
        outcome.stillRunning.then(undefined, () => {});
        return reject('handler_timeout', envelope);
      }
    }
    if (logger) safeLog(logger, { level: 'info', message: 'delivery without attestation acknowledged unauthenticated (no secrets configured); only onUnauthenticated handlers ran', code: 'unauthenticated', status: 200, eventId: envelope.event_id, eventType: envelope.event });
    return { status: 200, code: 'unauthenticated', headers: NO_HEADERS, body: UNAUTHENTICATED_BODY };
  }

  // Every step below runs once per delivery, so the common path avoids what it can: no microtask for an answer
  // that is already there (a synchronous HMAC), no copy of a payload the schema guard accepted as it is, no log
  // entry built for a receiver without a logger.
  async function check(input: ReceiveInput): Promise<Checked> {
    {
      // 1. limits
      const method = input.method;
      if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST') return { refused: rejection('method_not_allowed') };
      const body = toBytes(input.body);
      if (!body) return { refused: rejection('body_already_parsed') };
      if (body.byteLength > maxBodyBytes) return { refused: rejection('body_too_large') };
      if (!isJsonContentType(readHeader(input.headers, 'content-type'))) return { refused: rejection('unsupported_media_type') };

      // 2. signature over the exact bytes
      let hmac: { version: string } | null = null;
      if (checkSignature) {
        let verified: VerifiedSignature | Promise<VerifiedSignature>;
        try {
          verified = checkSignature(readHeader(input.headers, 'service-kyb-signature'), body);
          if (verified instanceof Promise) verified = await verified;
        } catch (error) {
          return { refused: asKybError(error) };
        }
        hmac = { version: verified.version };
      }

      // 3. parse the verified bytes, never a re-serialization
      let json: unknown;
      try {
        json = JSON.parse(utf8.decode(body));
      } catch {
        return { refused: rejection('body_not_json') };
      }

      // 4. envelope
      const parsed = validateEnvelope(json);
      if (!parsed.success) return { refused: rejection('envelope_invalid', describeIssues(parsed.issues)) };
      const envelope = parsed.data;

      // 5. attestation: every event that carries one is verified, known type or not, and bound to this envelope
      let claims: AttestationClaims | undefined;
      if (envelope.attestation !== undefined) {
        if (!verifyAttestation) return { refused: rejection('attestation_not_configured'), envelope };
        try {
          claims = await verifyAttestation(envelope.attestation, envelope);
        } catch (error) {
          return { refused: asKybError(error), envelope };
        }
      } else if (ATTESTED_EVENT_TYPES.has(envelope.event)) {
        return { refused: rejection('attestation_missing'), envelope };
      } else if (!hmac) {
        // No secrets and no attestation: nothing authenticates this delivery (spec 5.4).
        return { unauthenticated: envelope };
      }

      const validateData = dataValidators.get(envelope.event);
      let event: KybEvent | UnknownKybEvent = envelope;
      if (validateData) {
        const data = validateData(envelope.data);
        if (!data.success) return { refused: rejection('event_data_invalid', describeIssues(data.issues)), envelope };
        // The guard hands back the very object it accepted; only zod's own output (never expected) is a copy.
        if (data.data !== envelope.data) event = { ...envelope, data: data.data } as KybEvent;
      }
      // Authenticated by now: by the HMAC, the attestation or both (the unauthenticated case returned above).
      const context = new DeliveryContext(
        { hmac, attestation: claims !== undefined },
        claims,
        parseAttempt(readHeader(input.headers, 'service-delivery-attempt')),
      );
      if (claims && envelope.event === 'kyb.data_request.released') context.answers = answersFromClaims(claims);

      // 6. dedupe, only now: an unverified delivery must never poison the store. The key is the event id, plus the
      // type when the event is attested but nothing signed fixes its type (no type claim, not a release): the
      // attestation is the trust boundary (spec 5.4), so a token re-wrapped under another type must never mark the
      // genuine event as done, whatever else authenticated the envelope.
      const dedupeKey =
        claims && typeBindingOf(claims, envelope.event) === 'unbound' ? `${envelope.event_id}:${envelope.event}` : envelope.event_id;
      return { envelope, event, context, dedupeKey, typed: validateData !== undefined };
    }
  }

  async function receive(input: ReceiveInput): Promise<ReceiveResult> {
    try {
      const checked = await check(input);
      if ('refused' in checked) return reject(checked.refused, checked.envelope);
      if ('unauthenticated' in checked) return await receiveUnauthenticated(checked.unauthenticated, input);
      // Ordering on: the ordered path dedupes, orders and runs it (ordering.ts).
      if (ordered) return await ordered(checked);
      return await processVerified(checked.envelope, checked.event, checked.context, checked.dedupeKey, checked.typed);
    } catch (error) {
      // A bug of ours or a throwing logger: still a clean, retryable answer, never a crash and never a 2xx.
      return reject(rejection('internal_error', undefined, error));
    }
  }

  async function verify(input: ReceiveInput): Promise<VerifiedDelivery> {
    const checked = await check(input);
    if ('refused' in checked) throw checked.refused;
    if ('unauthenticated' in checked) {
      throw new KybWebhookError(
        'attestation_missing',
        'Nothing authenticates this delivery: the receiver has no secrets and the event carries no attestation (spec 5.4).',
      );
    }
    const { context } = checked;
    return {
      event: checked.event,
      authentication: context.authentication,
      claims: context.claims,
      answers: context.answers,
      deliveryAttempt: context.deliveryAttempt,
    };
  }


  /**
   * Steps 6 to 8 with ordering off, for a verified event (a delivery, or a fetched one given to `replay`): dedupe,
   * dispatch within handlerTimeoutMs, settle. May throw only through a bug; the callers turn that into internal_error.
   */
  async function processVerified(
    envelope: Envelope,
    event: KybEvent | UnknownKybEvent,
    context: DeliveryContext,
    dedupeKey: string,
    typed: boolean,
  ): Promise<ReceiveResult> {
    let claim: ClaimResult;
    try {
      claim = await claimWithin(dedupeKey);
    } catch (error) {
      return reject(rejection('store_unavailable', storeFailure('claim', error), error), envelope);
    }
    if (claim.status === 'completed') {
      if (logger) safeLog(logger, { level: 'info', message: 'duplicate delivery acknowledged', code: 'duplicate', status: 200, eventId: envelope.event_id, eventType: envelope.event });
      return { status: 200, code: 'duplicate', headers: NO_HEADERS, body: DUPLICATE_BODY, event };
    }
    if (claim.status === 'in_progress') return { ...reject('in_progress', envelope), event };

    // 7. dispatch, within handlerTimeoutMs
    const token = claim.token;
    const outcome = await runHandlers(() => handlers.run(event as Envelope, context as unknown as HandlerContext, typed), context, envelope);
    if (outcome instanceof HandlerError) {
      // 8. settle a failure: free the claim so the service's retry runs the handlers again
      await settleFailure(dedupeKey, token, envelope);
      return { ...reject(rejection('handler_failed', undefined, outcome), envelope), event };
    }
    if (outcome !== HANDLED) {
      // Past the deadline. The claim stays held while the handler may still be running, so no retry runs it
      // concurrently before the lease ends; its late outcome still settles the claim (a late success is recorded,
      // so the retry is answered duplicate; a late failure frees the claim for the retry).
      outcome.stillRunning.then(
        () => settleSuccess(dedupeKey, token, envelope, true),
        () => settleFailure(dedupeKey, token, envelope),
      );
      return { ...reject('handler_timeout', envelope), event };
    }

    // 8. settle a success
    await settleSuccess(dedupeKey, token, envelope, false);
    if (logger) safeLog(logger, { level: 'debug', message: 'delivery processed', status: 200, eventId: envelope.event_id, eventType: envelope.event });
    return { status: 200, headers: NO_HEADERS, body: RECEIVED_BODY, event };
  }

  // Ordering off (the default) leaves `ordered` undefined: the hot path pays one branch on it and nothing else.
  const ordering = options.ordering;
  const ordered =
    ordering && ordering.mode !== 'off' && isStreamCursorStore(store)
      ? createOrderedReceive<VerifiedItem, ReceiveResult>({
          mode: ordering.mode,
          firstSeq: ordering.firstSeq ?? 0,
          fetchEventsAfter: ordering.fetchEventsAfter,
          store,
          retainMs,
          handlerTimeoutMs,
          logger,
          gapHandlers,
          callStore,
          claim: claimWithin,
          run: runClaimed,
          verifyFetched,
          release: (item, token) => settleFailure(item.dedupeKey, token, item.envelope),
          reject: (error, item) => ({ ...reject(error, item.envelope), event: item.event }),
          accept(item, code) {
            const { envelope, event } = item;
            if (code === 'duplicate') {
              if (logger) safeLog(logger, { level: 'info', message: 'duplicate delivery acknowledged', code: 'duplicate', status: 200, eventId: envelope.event_id, eventType: envelope.event });
              return { status: 200, code, headers: NO_HEADERS, body: DUPLICATE_BODY, event };
            }
            if (code === 'late') {
              if (logger) safeLog(logger, { level: 'info', message: 'late event taken by the onGap handlers', code: 'late', status: 200, eventId: envelope.event_id, eventType: envelope.event });
              return { status: 200, code, headers: NO_HEADERS, body: LATE_BODY, event };
            }
            if (logger) safeLog(logger, { level: 'debug', message: 'delivery processed', status: 200, eventId: envelope.event_id, eventType: envelope.event });
            return { status: 200, headers: NO_HEADERS, body: RECEIVED_BODY, event };
          },
          describeStoreFailure: storeFailure,
        })
      : undefined;

  /** Runs the handlers of a claimed event for the ordered path; a failure has released the claim. */
  async function runClaimed(item: VerifiedItem, token: string, settleLateSuccess: () => Promise<void>): Promise<KybWebhookError | undefined> {
    const { envelope, context } = item;
    const outcome = await runHandlers(() => handlers.run(item.event as Envelope, context as unknown as HandlerContext, item.typed), context, envelope);
    if (outcome instanceof HandlerError) {
      await settleFailure(item.dedupeKey, token, envelope);
      return rejection('handler_failed', undefined, outcome);
    }
    if (outcome !== HANDLED) {
      // As on the unordered path: the claim stays held while the handler may still run; its late outcome settles it.
      outcome.stillRunning.then(settleLateSuccess, () => settleFailure(item.dedupeKey, token, envelope));
      return rejection('handler_timeout');
    }
    return undefined;
  }

  /**
   * Verifies an event fetched from the KYB API to fill a gap, with the checks a delivery gets after its HMAC: the
   * envelope schema, the attestation (an attested type must carry one, verified and bound to the envelope), the
   * event data schema. It has no HMAC to check: the API answered it over a call authenticated by the API key.
   */
  async function verifyFetched(raw: unknown): Promise<VerifiedItem | KybWebhookError> {
    const parsed = validateEnvelope(raw);
    if (!parsed.success) return rejection('envelope_invalid', describeIssues(parsed.issues));
    const envelope = parsed.data;
    let claims: AttestationClaims | undefined;
    if (envelope.attestation !== undefined) {
      if (!verifyAttestation) return rejection('attestation_not_configured');
      try {
        claims = await verifyAttestation(envelope.attestation, envelope, { fetched: true });
      } catch (error) {
        return asKybError(error);
      }
    } else if (ATTESTED_EVENT_TYPES.has(envelope.event)) {
      return rejection('attestation_missing');
    }
    const validateData = dataValidators.get(envelope.event);
    let event: KybEvent | UnknownKybEvent = envelope;
    if (validateData) {
      const data = validateData(envelope.data);
      if (!data.success) return rejection('event_data_invalid', describeIssues(data.issues));
      if (data.data !== envelope.data) event = { ...envelope, data: data.data } as KybEvent;
    }
    const context = new DeliveryContext({ hmac: null, attestation: claims !== undefined, fetched: true }, claims, undefined);
    if (claims && envelope.event === 'kyb.data_request.released') context.answers = answersFromClaims(claims);
    const dedupeKey =
      claims && typeBindingOf(claims, envelope.event) === 'unbound' ? `${envelope.event_id}:${envelope.event}` : envelope.event_id;
    return { envelope, event, context, dedupeKey, typed: validateData !== undefined };
  }

  const receiver: Receiver = {
    on(type, handler) {
      for (const each of handlerTypes(type, handler)) handlers.add(each, handler as unknown as AnyEventHandler);
      return receiver;
    },
    onAny(handler) {
      handlers.addAny(handler);
      return receiver;
    },
    onUnknown(handler) {
      handlers.addUnknown(handler);
      return receiver;
    },
    onUnauthenticated(handler) {
      handlers.unauthenticated.push(handler);
      return receiver;
    },
    onError(handler) {
      handlers.error.push(handler);
      return receiver;
    },
    onGap(handler) {
      gapHandlers.push(handler);
      return receiver;
    },
    receive,
    verify,
    async replay(raw, replayOptions) {
      try {
        return await replayFetched(raw, replayOptions, {
          verify: verifyFetched,
          refuse: (error) => reject(error),
          process: (item) =>
            ordered ? ordered(item) : processVerified(item.envelope, item.event, item.context, item.dedupeKey, item.typed),
        });
      } catch (error) {
        if (replayOptions?.signal?.aborted && error === replayOptions.signal.reason) throw error;
        return reject(rejection('internal_error', undefined, error));
      }
    },
    orderingMode: ordered ? ordering!.mode : 'off',
    reject(code) {
      return reject(code);
    },
    maxBodyBytes,
  };
  return receiver;
}

/** What the checks of a delivery (steps 1 to 5 and the data schema) end in. */
type Checked = VerifiedItem | { refused: KybWebhookError; envelope?: Envelope } | { unauthenticated: Envelope };

/** A verified event on the ordered path: what the handlers get, and how it is deduped. */
interface VerifiedItem extends OrderedItem {
  event: KybEvent | UnknownKybEvent;
  context: DeliveryContext;
  typed: boolean;
}

/** A store call that did not settle within storeTimeoutMs; `pending` is the call, which may still settle. */
class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  constructor(
    readonly operation: string,
    timeoutMs: number,
    readonly pending: unknown,
  ) {
    super(`the store's ${operation}() did not settle within storeTimeoutMs (${timeoutMs} ms)`);
  }
}

/** Why a store call failed, for the log: timed out, answered unexpectedly, or threw. */
function storeFailure(operation: string, error: unknown): string {
  if (error instanceof StoreTimeoutError) return error.message;
  if (error instanceof TypeError && /answered/.test(error.message)) return error.message;
  return `${operation} failed`;
}

function asKybError(error: unknown): KybWebhookError {
  return error instanceof KybWebhookError ? error : rejection('internal_error', undefined, error);
}

function toBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === 'application/json') return true;
  if (!value) return false;
  const mediaType = value.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

function parseAttempt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}

/** Names what failed without echoing any value from the body. */
function describeIssues(issues: readonly { path: PropertyKey[]; code: string }[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.code}`)
    .join('; ');
}
