import { signatureVersionOf } from './capture.js';

/**
 * What `200 unauthenticated` means for the sender, and what to do about it.
 *
 * @example
 * ```ts
 * if (sent.code === 'unauthenticated') print(`note: ${UNAUTHENTICATED_NOTE}`)
 * ```
 */
export const UNAUTHENTICATED_NOTE =
  'acknowledged but not processed: the receiver has no HMAC secrets and this type carries no attestation, so nothing authenticates it (spec 5.4) and no handler ran; give the receiver the KYB_SECRET_V<n> variables `kyb-webhooks keys` prints to process such events.';

/**
 * Why an HMAC scenario cannot judge a receiver that answers `200 unauthenticated`: it has no secrets to check MACs
 * with, which the spec allows (the attestation is the trust boundary), so its answers say nothing about HMACs.
 *
 * @example
 * ```ts
 * print(`\u2717 precondition: ${HMAC_PRECONDITION}`)
 * ```
 */
export const HMAC_PRECONDITION =
  'the receiver has no HMAC secrets configured (it answered 200 unauthenticated); this scenario needs them: give it the KYB_SECRET_V<n> variables `kyb-webhooks keys` prints, restart it and run the scenario again.';

/**
 * The checks of the receiver's pipeline, in order (docs/architecture.md §3), as `verify` reports them.
 *
 * @example
 * ```ts
 * CHECKS.indexOf(checkOf('signature_mismatch')) // 1
 * ```
 */
export const CHECKS = ['request', 'signature', 'body', 'envelope', 'attestation', 'event data'] as const;

/**
 * One check of {@link CHECKS}.
 *
 * @example
 * ```ts
 * const check: Check = 'attestation'
 * ```
 */
export type Check = (typeof CHECKS)[number];

interface CodeInfo {
  check: Check | 'receiver';
  /** What the sender (or the developer) does about it. */
  fix: string;
}

const CODES: Record<string, CodeInfo> = {
  method_not_allowed: { check: 'request', fix: 'Deliveries are POST requests; send it with POST.' },
  unsupported_media_type: { check: 'request', fix: 'Send it with Content-Type: application/json.' },
  body_too_large: {
    check: 'request',
    fix: 'The body is over the receiver\u2019s maxBodyBytes; raise maxBodyBytes if such bodies are genuine.',
  },
  signature_missing: {
    check: 'signature',
    fix: 'The Service-KYB-Signature header is missing: capture the headers with the body, or check that a proxy does not strip it.',
  },
  signature_malformed: {
    check: 'signature',
    fix: 'The Service-KYB-Signature header must be t=<unix>,v1=<64 hex>,kv=<version>; check that nothing rewrote it.',
  },
  signature_unknown_version: {
    check: 'signature',
    fix: 'The kv version is not among the receiver\u2019s secrets: add that version (KYB_SECRET_V<kv>), or sign with a version it has (send --secret-version, replay --resign --secret-version).',
  },
  signature_version_expired: {
    check: 'signature',
    fix: 'The rotation overlap of this kv version has ended: sign with the current version.',
  },
  signature_expired: {
    check: 'signature',
    fix: 'The signature\u2019s t is more than 5 minutes old: send it afresh (replay --resign), or verify it as of its signing time (verify --at-signature-time).',
  },
  signature_future: {
    check: 'signature',
    fix: 'The signature\u2019s t is more than 5 minutes ahead of this clock: check the clocks of both machines.',
  },
  signature_mismatch: {
    check: 'signature',
    fix: 'The HMAC does not match these bytes with this secret version: check that the receiver has the same secret (KYB_SECRET_V<kv>) and gets the exact raw bytes (mount the webhook route before any JSON body parser).',
  },
  body_not_json: { check: 'body', fix: 'The body is not UTF-8 JSON: capture the exact bytes the service sent.' },
  envelope_invalid: {
    check: 'envelope',
    fix: 'The body is not a webhook envelope (event_id a 26-character ULID, stream_id, seq an integer \u2265 0, timestamp, api_version YYYY-MM-DD, data an object).',
  },
  attestation_missing: {
    check: 'attestation',
    fix: 'This event type must carry an attestation JWT; the service always attests it.',
  },
  attestation_invalid_typ: {
    check: 'attestation',
    fix: 'The attestation is not a kyb-attestation+jwt token (another kind of JWT was put there).',
  },
  attestation_invalid: {
    check: 'attestation',
    fix: 'The attestation did not verify (signature, kid, iss, aud, exp or iat): check KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL, and that the token has not expired.',
  },
  attestation_relabelled: {
    check: 'attestation',
    fix: 'The envelope\u2019s event_id, stream_id, seq, type or data differ from the signed claims: the token was issued for another event.',
  },
  attestation_not_configured: {
    check: 'attestation',
    fix: 'The receiver has no attestation options: set KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL.',
  },
  jwks_unavailable: {
    check: 'attestation',
    fix: 'The receiver could not fetch the JWKS: keep `kyb-webhooks jwks serve` running (or let send/scenario serve it) at the KYB_JWKS_URL the receiver was given; after a failed fetch it waits jwksCooldownMs (30 s) before trying again.',
  },
  event_data_invalid: {
    check: 'event data',
    fix: 'The data object does not match the schema of its event type; the service retries it. Fix the data (or upgrade the library if the service added a field shape).',
  },
  in_progress: {
    check: 'receiver',
    fix: 'Another delivery of this event is being processed; the service retries later.',
  },
  out_of_order: {
    check: 'receiver',
    fix: 'Ordering enforce: an earlier event of the stream is missing and the API does not have it yet; the service retries.',
  },
  backfill_invalid: {
    check: 'receiver',
    fix: 'Ordering enforce: an earlier event fetched from the API failed verification.',
  },
  backfill_unfillable: {
    check: 'receiver',
    fix: 'Ordering enforce: an earlier event can never be fetched verifiably (purged release, retired key, gone); the stream waits until ordering.onUnfillable skips it (see the receiver log line stream_unfillable).',
  },
  backfill_unavailable: {
    check: 'receiver',
    fix: 'Ordering enforce: the earlier events could not be fetched from the KYB API (fetchEventsAfter), or not within backfillTimeoutMs; the retry goes on from the last one that ran.',
  },
  late_unhandled: {
    check: 'receiver',
    fix: 'Ordering enforce: an event behind its stream\u2019s cursor and no onGap handler took it; register receiver.onGap.',
  },
  handler_failed: {
    check: 'receiver',
    fix: 'Your handler threw; see your app\u2019s log for the error. The service retries.',
  },
  handler_timeout: {
    check: 'receiver',
    fix: 'Your handler ran longer than handlerTimeoutMs; pass context.signal to slow calls.',
  },
  body_already_parsed: {
    check: 'receiver',
    fix: 'A JSON body parser ran before the webhook route: mount the webhook route first.',
  },
  store_unavailable: { check: 'receiver', fix: 'The dedupe store failed or timed out; check its connection.' },
  internal_error: { check: 'receiver', fix: 'The receiver failed unexpectedly; see your app\u2019s log.' },
  // A 2xx, but no handler ran: a receiver without HMAC secrets (JWT-only, spec 5.4) cannot authenticate an event
  // that carries no attestation, so it acknowledges it and drops it.
  unauthenticated: { check: 'receiver', fix: UNAUTHENTICATED_NOTE },
};

/**
 * What to do about a rejection code, in one sentence; a generic line for codes this CLI does not know.
 *
 * @example
 * ```ts
 * fixFor('signature_expired') // 'The signature’s t is more than 5 minutes old: …'
 * fixFor('signature_mismatch', { 'service-kyb-signature': 't=…,v1=…,kv=2' }) // '… the same secret (KYB_SECRET_V2) …'
 * ```
 */
export function fixFor(code: string | undefined, headers?: Readonly<Record<string, string>>): string {
  if (code === undefined) return '';
  const fix = CODES[code]?.fix ?? 'See the codes table in the @kyb-webhooks/core README.';
  // Name the variable to check when the delivery says which version it was signed with (a kv the core would accept).
  const version = signatureVersionOf(headers);
  return version === undefined ? fix : fix.replaceAll('KYB_SECRET_V<kv>', `KYB_SECRET_V${version}`);
}

/**
 * Which pipeline check a rejection code comes from (`receiver` for failures after verification).
 *
 * @example
 * ```ts
 * checkOf('attestation_relabelled') // 'attestation'
 * ```
 */
export function checkOf(code: string): Check | 'receiver' {
  return CODES[code]?.check ?? 'receiver';
}

/**
 * Why a 404 or 405 without a receiver's code came back: the receiver answers every method with a code of its own,
 * so such an answer is the framework's, for a path no webhook route serves (a typo, a trailing slash, another
 * prefix). Undefined for any other answer.
 *
 * @example
 * ```ts
 * routeHint({ status: 404 }, 'http://127.0.0.1:3000/webhook') // 'nothing answers POST at /webhook: …'
 * ```
 */
export function routeHint(sent: { status: number | null; code?: string | undefined }, to: string): string | undefined {
  if ((sent.status !== 404 && sent.status !== 405) || sent.code !== undefined) return undefined;
  let path = to;
  try {
    path = new URL(to).pathname;
  } catch {
    // --to was checked before sending; keep it as given
  }
  return (
    `nothing answers POST at ${path}: check that --to names your webhook route exactly, the path your app mounts ` +
    'kybWebhooks on (the examples use /webhooks/kyb, without a trailing slash).'
  );
}
