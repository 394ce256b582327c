import type { JWTPayload } from 'jose';
import { describeAnswersSearch, locateReleasedAnswerList, type LocatedAnswerList } from '../events/released-answers.js';
import { rejection } from '../errors.js';
import { ATTESTED_EVENT_TYPES, isKnownEventType } from '../events/event-types.js';

/** The verified claims of an attestation. Claims the spec does not show are kept as `unknown`. */
export interface AttestationClaims extends JWTPayload {
  iss: string;
  aud: string | string[];
  exp: number;
  iat: number;
  event_id: string;
  stream_id: string;
  seq: number;
  request_id: string;
  [claim: string]: unknown;
}

/** The envelope an attestation arrived in: everything the binding rules compare with the signed claims. */
export interface AttestedEnvelope {
  event: string;
  event_id: string;
  stream_id: string;
  seq: number;
  data: Record<string, unknown>;
}

/** The event type a released payload (the answers list) belongs to: released values travel under no other type. */
const RELEASED = 'kyb.data_request.released';
/** Claims that name the event type, where a token has one (spec 2.8 does not show one; we bind it when present). */
const TYPE_CLAIMS = ['event', 'event_type'] as const;

/**
 * How far an attestation vouches for the event type of its envelope. `'bound'`: the type is fixed by the signed
 * claims (a type claim, or the released payload, which travels only under `kyb.data_request.released`).
 * `'unbound'`: the claims carry nothing that fixes the type (the spec's claims of 2.8 alone), so the type is taken on
 * the envelope's word; the receiver then keeps the type in the dedupe key, so that a token re-wrapped under another
 * type can never mark the genuine event as done.
 */
export type TypeBinding = 'bound' | 'unbound';

/**
 * Checks that a verified attestation was issued for exactly this envelope (spec 5.5.5 and docs/architecture.md §4), and throws
 * `attestation_relabelled` otherwise. What is bound:
 * - `event_id`, `stream_id` and `seq` equal their signed copies, and the signed `request_id` equals the envelope's
 *   `stream_id` (spec 2.3: the stream appears as both in the claims);
 * - `data.request_id`, when present, equals the signed `request_id`;
 * - the type: an attestation is never accepted on a type the spec marks unattested (the five other known types);
 *   a type claim (`event` or `event_type`), when the token has one, must equal the envelope's type; the released
 *   payload (the answers list) is accepted only under `kyb.data_request.released`, and a release must carry it;
 * - every field of `data` that the claims also carry must equal the signed value (compared as JSON values).
 * What cannot be bound: `data` fields the claims do not carry, `timestamp` and `api_version`. When the HMAC is
 * configured it covers them all; without it, read such values from the claims.
 *
 * @example
 * ```ts
 * const claims = await verify(envelope.attestation, envelope)
 * checkAttestationBinding(claims, envelope) // throws attestation_relabelled on a re-wrapped token
 * checkAttestationBinding(claims, envelope, 'released_values') // the released answers are in that claim
 * ```
 */
export function checkAttestationBinding(
  claims: AttestationClaims,
  envelope: AttestedEnvelope,
  answersClaim?: string,
): void {
  bindAttestation(claims, envelope, answersClaim);
}

/**
 * {@link checkAttestationBinding}, answering where the claims carry a release's answers (undefined when they carry
 * none): the binding has to find them, and the receiver then reads them from there rather than searching again.
 *
 * @example
 * ```ts
 * const located = bindAttestation(claims, envelope, options.answersClaim) // throws attestation_relabelled
 * const answers = releasedAnswersOf(located)
 * ```
 */
export function bindAttestation(
  claims: AttestationClaims,
  envelope: AttestedEnvelope,
  answersClaim: string | undefined,
): LocatedAnswerList | undefined {
  const mismatched: string[] = [];
  if (claims.event_id !== envelope.event_id) mismatched.push('event_id');
  if (claims.stream_id !== envelope.stream_id) mismatched.push('stream_id');
  if (claims.request_id !== envelope.stream_id) mismatched.push('request_id');
  if (claims.seq !== envelope.seq) mismatched.push('seq');

  const type = envelope.event;
  if (isKnownEventType(type) && !ATTESTED_EVENT_TYPES.has(type))
    mismatched.push('event (a type the spec marks unattested)');
  // Each type claim by name, not a loop over TYPE_CLAIMS: this runs for every attested delivery.
  if (Object.hasOwn(claims, 'event') && claims['event'] !== type) mismatched.push('event (signed event)');
  if (Object.hasOwn(claims, 'event_type') && claims['event_type'] !== type)
    mismatched.push('event (signed event_type)');
  const located = locateReleasedAnswerList(claims, answersClaim);
  const carriesRelease = located !== undefined;
  if (carriesRelease && type !== RELEASED)
    mismatched.push('event (the released payload travels only under kyb.data_request.released)');
  if (!carriesRelease && type === RELEASED)
    mismatched.push(
      `event (a release whose attestation carries no released answers: ${describeAnswersSearch(answersClaim)})`,
    );

  // Data fields the claims also carry must be the signed values; this includes data.request_id.
  const fields = Object.keys(envelope.data);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (Object.hasOwn(claims, field) && !sameJsonValue(envelope.data[field], claims[field]))
      mismatched.push(`data.${field}`);
  }
  if (mismatched.length > 0) throw rejection('attestation_relabelled', `mismatch in ${mismatched.join(', ')}`);
  return located;
}

/**
 * Whether verified claims fix the envelope's type ({@link TypeBinding}), for a token that passed
 * {@link checkAttestationBinding}: a matching type claim, or a release (whose payload was checked to be present).
 *
 * @example
 * ```ts
 * const dedupeKey = typeBindingOf(claims, envelope.event) === 'bound' ? envelope.event_id : `${envelope.event_id}:${envelope.event}`
 * ```
 */
export function typeBindingOf(claims: AttestationClaims, type: string): TypeBinding {
  if (type === RELEASED) return 'bound';
  return TYPE_CLAIMS.some((name) => claims[name] === type) ? 'bound' : 'unbound';
}

/** Equality of two values parsed from JSON (no cycles possible); object key order does not matter, an array hole is undefined. */
function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    // An index loop, not every(): every() skips the holes of a sparse array, and an envelope built in JavaScript and
    // handed to checkAttestationBinding could then match any signed value at a hole.
    for (let index = 0; index < a.length; index++) if (!sameJsonValue(a[index], other[index])) return false;
    return true;
  }
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  return aKeys.every(
    (key) =>
      Object.hasOwn(b, key) && sameJsonValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}
