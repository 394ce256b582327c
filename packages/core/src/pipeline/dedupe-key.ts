/**
 * The key an event is claimed under in the dedupe store (step 6): worked out by the checks (checks.ts) from what the
 * verified attestation fixes, and used by the claim, run and settle steps (claim-run-settle.ts).
 */
import type { Envelope } from '../events/envelope.js';
import { typeBindingOf, type AttestationClaims } from '../verify/attestation-binding.js';

/**
 * Attested types whose token signs no type, deduped under a key of their own (`<event_id>:<type>`). Frozen: a
 * processed event must keep its key in every later version, or its redelivery after an upgrade (or during a rolling
 * deploy) would run again. A type added to the library later still shares `<event_id>:unknown`.
 */
const OWN_KEY_TYPES: ReadonlySet<string> = new Set(['kyb.business.wallet_address_changed']);

/**
 * The key an event is claimed under: its event id, plus what nothing signed fixes when it is attested without a type
 * claim (and is not a release). The attestation is the trust boundary (spec 5.4), so a token re-wrapped under another
 * type must never mark a genuine event of a known type as done: such a type keeps its own key.
 *
 * Every other type shares ONE key, `<event_id>:unknown`. With the type itself in the key, one genuine token replayed
 * under endless invented types made a new record and a new handler run each time (on a receiver without `secrets`,
 * anyone who saw a delivery body could), until the memory store evicted genuine records and ran their redeliveries
 * again. The price: a token of an unknown type re-wrapped under another unknown type, arriving first, makes the
 * genuine one a duplicate. The rule is the same with or without `secrets`, so adding a secret changes no key.
 */
export function dedupeKeyOf(envelope: Envelope, claims: AttestationClaims | undefined): string {
  if (!claims || typeBindingOf(claims, envelope.event) === 'bound') return envelope.event_id;
  return OWN_KEY_TYPES.has(envelope.event) ? `${envelope.event_id}:${envelope.event}` : `${envelope.event_id}:unknown`;
}
