/**
 * The public types of a receiver: its options, what an adapter hands it, what it answers, and the {@link Receiver}
 * interface itself. `createReceiver` (receiver.ts) builds one; the steps it runs live in their own files.
 */
import type { ReleasedAnswers } from './events/released-answers.js';
import type { AttestationClaims, AttestationOptions } from './verify/attestation.js';
import type { PlatformCrypto } from './verify/crypto/types.js';
import type { DedupeStore } from './store/dedupe.js';
import type {
  AnyEventHandler,
  DeliveryAuthentication,
  EventHandler,
  HandlerError,
  UnauthenticatedEventHandler,
  UnknownEventHandler,
} from './pipeline/dispatch.js';
import type { ErrorCode } from './errors.js';
import type { KnownEventType, KybEvent, UnknownKybEvent } from './events/events.js';
import type { HeadersInput } from './http/headers.js';
import type { Logger } from './log/logger.js';
import type { GapHandler, OrderingMode, OrderingOptions, StreamOrdering } from './ordering/types.js';
import type { QueuePayloadEncryption } from './queue/payload-encryption.js';
import type { EventQueue } from './queue/types.js';
import type { ApiVersionOptions } from './pipeline/api-version.js';
import type { ReceiverTelemetry } from './telemetry/observers.js';
import type { ReplayOptions } from './pipeline/replay.js';
import type { SecretKeyring } from './verify/signature.js';

/**
 * Options of {@link createReceiver}. At least one of `secrets` and `attestation` is required.
 *
 * @example
 * ```ts
 * const options: ReceiverOptions = {
 *   secrets: { '3': process.env.KYB_SECRET_V3! },
 *   store: createRedisStore({ client: redis }),
 *   handlerTimeoutMs: 10_000,
 * }
 * ```
 */
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
   * Per-stream order (docs/architecture.md §8): `streamOrdering({ mode: 'detect' | 'enforce', firstSeq?: 0 | 1,
   * fetchEventsAfter? })`, which attaches the ordering engine to the options (so receivers without ordering never load
   * it). Default off: each delivery on its own, no cursor read or written. `'detect'` and `'enforce'` need a store with
   * stream cursors (every built-in store); `'enforce'` also needs `fetchEventsAfter`, e.g.
   * `(s, a, signal) => client.events(s, { afterSeq: a, signal })` with `@kyb-webhooks/client`. See {@link OrderingOptions}.
   */
  ordering?: StreamOrdering | (OrderingOptions & { mode: 'off' });
  /**
   * Queue mode (docs/queue-mode.md): a verified delivery is written to this queue and answered `200 queued` once the
   * queue has it (`503 queue_unavailable` / `429 queue_full` otherwise); `createQueueWorker(receiver)` runs the
   * handlers from the queue, with the same dedupe, ordering and settle steps as inline. Default: none (inline: the
   * answer waits for the handlers). Engines: `createMemoryQueue` (one process, tests), pg-boss, BullMQ.
   */
  queue?: EventQueue;
  /**
   * The `api_version` your handlers were written for, and what a delivery of another version gets: processed and
   * logged once per version (`onOther: 'accept'`, the default), or `503 api_version_unsupported` so the service
   * retries it while you deploy (`'reject'`). Default: none (every version processed, nothing logged about it). A
   * `Service-Kyb-Api-Version` header that disagrees with the signed body is logged as suspect either way.
   */
  apiVersion?: ApiVersionOptions;
  /**
   * An observability layer that runs every delivery, handler run and store call (`openTelemetry()` of
   * `@kyb-webhooks/opentelemetry`, or your own {@link ReceiverTelemetry}). Default: none; the tracing channels of
   * `node:diagnostics_channel` are published either way while someone subscribes (docs/observability.md).
   */
  telemetry?: ReceiverTelemetry;
  /**
   * Queue mode: seal each job's payload (the verified envelope and the attestation claims, a release's answers
   * among them) with AES-256-GCM before it is enqueued, so the queue's tables hold no personal data in the clear;
   * the workers' receiver opens it with the key the job names. Give the HTTP process and the workers the same keys.
   * Made by `queuePayloadEncryption({ keys, encryptWith })`. Default: none (payloads stored as JSON).
   */
  queueEncryption?: QueuePayloadEncryption;
  /** @internal Crypto implementation override for tests of both paths. */
  crypto?: PlatformCrypto;
}

/**
 * A delivery as an adapter hands it over.
 *
 * @example
 * ```ts
 * const input: ReceiveInput = { method: req.method, headers: req.headers, body: rawBody } // the bytes as received
 * ```
 */
export interface ReceiveInput {
  /** HTTP method; when omitted the adapter vouches that it is POST. */
  method?: string;
  headers: HeadersInput;
  /** The raw body exactly as received. A string is taken as its UTF-8 bytes. */
  body: Uint8Array | ArrayBuffer | string;
  /**
   * Where work that goes on after the answer is handed, on a runtime that stops a request's work once it is answered
   * (Cloudflare Workers: `ctx.waitUntil`; Vercel: `waitUntil` from `@vercel/functions`). Today that is the handler
   * that passed `handlerTimeoutMs`: its late outcome still settles the claim, so the retry is answered `duplicate`
   * (late success) or runs it again at once (late failure) instead of waiting out `leaseMs`. Not needed on Node,
   * Bun or Deno. `createFetchHandler` and the Hono adapter pass the Worker's own when they get one.
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/**
 * The JSON body the adapter sends back. `code: 'unauthenticated'` acknowledges a delivery that nothing could
 * authenticate (attestation-only receivers, an event without attestation): nothing was stored or processed.
 *
 * @example
 * ```ts
 * const { body } = await receiver.receive(input)
 * if ('error' in body) console.warn('kyb webhook refused', body.error.code) // e.g. 'signature_mismatch'
 * ```
 */
export type ResponseBody =
  | { received: true; code?: 'duplicate' | 'unauthenticated' | 'late' | 'queued' }
  | { error: { code: ErrorCode; message: string } };

/**
 * What the adapter writes back: status, extra headers and a JSON body.
 *
 * @example
 * ```ts
 * const { status, headers, body } = await receiver.receive({ method: 'POST', headers: req.headers, body: rawBody })
 * res.writeHead(status, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify(body))
 * ```
 */
export interface ReceiveResult {
  status: number;
  /**
   * `'duplicate'`, `'unauthenticated'`, `'queued'` (queue mode: handed to the queue), `'late'` (ordering enforce: an
   * event behind its stream's cursor that the
   * `onGap` handlers took) or a rejection code; absent for a first, successful delivery.
   */
  code?: ErrorCode | 'duplicate' | 'unauthenticated' | 'late' | 'queued';
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
 *
 * @example
 * ```ts
 * const receiver: Receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! } })
 * receiver.on('kyb.data_request.released', async (event) => saveRelease(event.data.request_id))
 * app.post('/webhooks/kyb', kybWebhooks(receiver))
 * ```
 */
export interface Receiver {
  /**
   * Handle events of one type, or of each type in a list; the event and its context are typed by the names (with a
   * list, `event.event` narrows the union). Throws `config_invalid`, in plain JavaScript too, for a handler that is
   * not a function or a name that is not an event type: a misspelt known name gets "did you mean" (README, Handlers);
   * a type this version does not know is taken in the known names' shape `kyb.<resource>.<action>`.
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
   * A start-up check of the attestation keys: fetches the JWKS now (`attestation.jwksUrl`; an inline `jwks` is just
   * counted) and resolves with how many keys it holds. Rejects with `jwks_unavailable` naming the URL and what failed
   * (its status, a timeout, a body too large or malformed), or `config_invalid` on a receiver without `attestation`.
   * Optional: deliveries fetch the keys themselves, and answer 503 (retried by the service) while they cannot. Call
   * it at boot to fail fast on a wrong URL; the fetched keys are then cached for the first deliveries.
   *
   * @example
   * ```ts
   * const { keys } = await receiver.checkAttestationKeys() // before app.listen()
   * console.log(`KYB JWKS reachable: ${keys} keys`)
   * ```
   */
  checkAttestationKeys(): Promise<{ keys: number }>;
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
