/**
 * Stable, machine-readable rejection codes. A code never changes meaning once released; new codes may be added.
 * Each maps to one HTTP status and a generic message that is safe to send back to the service: details
 * (which claim failed, which key version) go to the logger hook only, and nothing secret ever goes anywhere.
 *
 * @example
 * ```ts
 * ERRORS.signature_mismatch // { status: 401, message: 'The signature does not match the request body.' }
 * ```
 */
export const ERRORS = {
  // limits
  body_too_large: { status: 413, message: 'The request body is larger than maxBodyBytes.' },
  method_not_allowed: { status: 405, message: 'Webhook deliveries must use POST.' },
  unsupported_media_type: { status: 415, message: 'Webhook deliveries must be sent as application/json.' },
  // signature header (spec 5.7)
  signature_missing: { status: 401, message: 'The Service-KYB-Signature header is missing.' },
  signature_malformed: {
    status: 400,
    message: 'The Service-KYB-Signature header is not of the form t=<unix>,v1=<hex>,kv=<version>.',
  },
  signature_unknown_version: {
    status: 401,
    message: 'The signature names a secret version this receiver does not have.',
  },
  signature_version_expired: {
    status: 401,
    message: 'The signature names a secret version whose rotation overlap has ended.',
  },
  signature_expired: { status: 401, message: 'The signature timestamp is older than the allowed clock skew.' },
  signature_future: {
    status: 401,
    message: 'The signature timestamp is further in the future than the allowed clock skew.',
  },
  signature_mismatch: { status: 401, message: 'The signature does not match the request body.' },
  // body and envelope
  body_not_json: { status: 400, message: 'The request body is not valid UTF-8 JSON.' },
  envelope_invalid: { status: 400, message: 'The request body is not a valid webhook envelope.' },
  // attestation (spec 5.5)
  attestation_missing: { status: 401, message: 'This event type must carry an attestation.' },
  attestation_invalid_typ: { status: 401, message: 'The attestation is not a kyb-attestation+jwt token.' },
  attestation_invalid: { status: 401, message: 'The attestation could not be verified.' },
  attestation_relabelled: { status: 401, message: 'The envelope does not match the signed attestation claims.' },
  // verified event whose data does not match this library's schema for its type
  event_data_invalid: {
    status: 422,
    message: 'The event data does not match the schema for its type; it will be retried.',
  },
  // api_version (spec 9): only with apiVersion.onOther 'reject', so the service retries while you deploy
  api_version_unsupported: {
    status: 503,
    message: 'This receiver does not accept the api_version of this delivery yet; the delivery will be retried.',
  },
  // dedupe
  in_progress: { status: 409, message: 'This event is being processed by another delivery; retry later.' },
  // ordering (docs/architecture.md §8): answers the service retries, so a stream never loses an event and never stalls for good
  out_of_order: {
    status: 409,
    message:
      'An earlier event of this stream is missing and the KYB API does not have it yet; the delivery will be retried.',
  },
  backfill_invalid: {
    status: 502,
    message:
      'An earlier event of this stream fetched from the KYB API failed verification; the delivery will be retried.',
  },
  // The one ordering answer a retry cannot cure by itself: the stall lasts until ordering.onUnfillable skips the seq
  // (see the README's Ordering section). Still non-2xx, so the delivery is never acknowledged before it ran.
  backfill_unfillable: {
    status: 502,
    message:
      'An earlier event of this stream can no longer be fetched from the KYB API in a verifiable form; the stream waits until the receiver skips it.',
  },
  backfill_unavailable: {
    status: 503,
    message: 'The earlier events of this stream could not be fetched from the KYB API; the delivery will be retried.',
  },
  late_unhandled: {
    status: 500,
    message:
      'This event is behind its stream\u2019s cursor and no onGap handler took it; register receiver.onGap. It will be retried.',
  },
  // receiver-side failures: always non-2xx so the service retries and nothing is lost
  handler_failed: { status: 500, message: 'The event handler failed; the delivery will be retried.' },
  handler_timeout: {
    status: 503,
    message: 'The event handler did not finish within handlerTimeoutMs; the delivery will be retried.',
  },
  body_already_parsed: {
    status: 500,
    message:
      'The request body was already parsed before the webhook handler ran, so its exact bytes are lost. ' +
      'Mount the webhook route before any JSON body parser (or exclude its path from it); in Fastify, where order does ' +
      'not matter, register the kybWebhooks plugin or declare the route in a context whose content-type parser keeps the ' +
      "raw bytes (parseAs: 'buffer'); in a Next.js pages route, export const config = { api: { bodyParser: false } }.",
  },
  attestation_not_configured: {
    status: 500,
    message: 'This event carries an attestation but the receiver has no attestation options; configure attestation.',
  },
  internal_error: { status: 500, message: 'The receiver failed unexpectedly; the delivery will be retried.' },
  jwks_unavailable: { status: 503, message: 'The attestation keys could not be fetched; retry later.' },
  store_unavailable: { status: 503, message: 'The dedupe store is unavailable or answered unexpectedly; retry later.' },
  // queue mode (docs/queue-mode.md): the event was verified but could not be handed to the queue, so it is not acknowledged
  queue_unavailable: { status: 503, message: 'The event queue is unavailable; the delivery will be retried.' },
  queue_full: { status: 429, message: 'The event queue is over its backlog limit; retry after the time given.' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A stable rejection code, e.g. `'signature_mismatch'`: one of {@link ERRORS}, each with its HTTP status. */
export type ErrorCode = keyof typeof ERRORS;

/**
 * Every code a {@link KybWebhookError} carries, in one union: the rejection codes of {@link ERRORS} (each answered
 * with its status, so the service retries what a retry can cure) plus two never answered to the service:
 * `config_invalid`, thrown at creation for invalid options, and `job_undecryptable`, a queue worker's failure of a
 * job whose payload it cannot open (queue mode's `queueEncryption`: a key missing or wrong, or an unsealed job). Switch over it exhaustively; a code added in a minor release
 * makes the `never` check fail to compile, which is the point.
 *
 * @example
 * ```ts
 * function advice(error: KybWebhookError): string {
 *   const code: KybWebhookErrorCode = error.code
 *   switch (code) {
 *     case 'config_invalid': return error.message // names the option and the fix
 *     case 'job_undecryptable': return 'a queue worker lacks the key a job was sealed with: ' + error.message
 *     case 'signature_missing': case 'signature_malformed': case 'signature_mismatch': case 'signature_expired':
 *     case 'signature_future': case 'signature_unknown_version': case 'signature_version_expired':
 *       return 'not from the service, or a secret is missing'
 *     case 'attestation_missing': case 'attestation_invalid_typ': case 'attestation_invalid':
 *     case 'attestation_relabelled': case 'attestation_not_configured':
 *       return 'the attestation did not verify'
 *     case 'handler_failed': case 'handler_timeout': case 'late_unhandled':
 *       return 'your handler failed; the service retries'
 *     case 'jwks_unavailable': case 'store_unavailable': case 'backfill_unavailable': case 'internal_error':
 *     case 'queue_unavailable': case 'queue_full':
 *       return 'a dependency is down or full; the service retries'
 *     case 'in_progress': case 'out_of_order': case 'backfill_invalid': case 'event_data_invalid':
 *     case 'api_version_unsupported':
 *       return 'retried until it can be processed'
 *     case 'backfill_unfillable':
 *       return 'an earlier event is gone for good: skip it with ordering.onUnfillable'
 *     case 'body_too_large': case 'method_not_allowed': case 'unsupported_media_type': case 'body_not_json':
 *     case 'envelope_invalid': case 'body_already_parsed':
 *       return 'not a well-formed delivery'
 *     default: { const unhandled: never = code; return unhandled }
 *   }
 * }
 * ```
 */
export type KybWebhookErrorCode = ErrorCode | 'config_invalid' | 'job_undecryptable';

/**
 * The `code` of a 2xx answer that is not a plain first success: `duplicate` (processed before), `unauthenticated`
 * (nothing authenticates it; acknowledged, not processed), `late` (ordering enforce: taken by the `onGap` handlers),
 * `queued` (queue mode: verified and durably handed to the queue; a worker runs the handlers).
 *
 * @example
 * ```ts
 * if (result.status === 200 && result.code === 'duplicate') metrics.increment('kyb.duplicate')
 * ```
 */
export type AcknowledgementCode = 'duplicate' | 'unauthenticated' | 'late' | 'queued';

/**
 * Every code, in one list: the rejection codes of {@link ERRORS}, `config_invalid` and `job_undecryptable`.
 *
 * @example
 * ```ts
 * KYB_WEBHOOK_ERROR_CODES.includes('signature_mismatch') // true
 * ```
 */
export const KYB_WEBHOOK_ERROR_CODES: readonly KybWebhookErrorCode[] = Object.freeze([
  ...(Object.keys(ERRORS) as ErrorCode[]),
  'config_invalid',
  'job_undecryptable',
]);

/**
 * Thrown by the receiver's internal steps; the receiver turns it into a response. Also thrown by
 * {@link createReceiver} for configuration mistakes (code `config_invalid`).
 *
 * @example
 * ```ts
 * try { createReceiver({}) } catch (error) {
 *   if (error instanceof KybWebhookError) console.error(error.code) // 'config_invalid'
 * }
 * ```
 */
export class KybWebhookError extends Error {
  override readonly name = 'KybWebhookError';
  readonly code: KybWebhookErrorCode;
  /** Internal detail for the logger hook; never sent back to the service, never contains secrets or body text. */
  readonly detail: string | undefined;

  constructor(code: KybWebhookErrorCode, message?: string, options?: { detail?: string; cause?: unknown }) {
    super(message ?? defaultMessageOf(code), {
      cause: options?.cause,
    });
    this.code = code;
    this.detail = options?.detail;
  }
}

function defaultMessageOf(code: KybWebhookErrorCode): string {
  if (code === 'config_invalid') return 'Invalid receiver configuration.';
  if (code === 'job_undecryptable') return 'A queue job could not be decrypted.';
  return ERRORS[code].message;
}

export function rejection(code: ErrorCode, detail?: string, cause?: unknown): KybWebhookError {
  return new KybWebhookError(code, undefined, { detail, cause });
}
