// Spec 5.5.5: a relabelled delivery is refused as attestation_relabelled, and the logger's detail names every field
// the envelope got wrong (and only those), so an operator can tell a re-wrapped token from a misconfigured
// answersClaim. checkAttestationBinding on its own, one case per rule.
import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import { defaultReleasedAnswers } from '../../test-kit.js';
import {
  checkAttestationBinding,
  typeBindingOf,
  type AttestationClaims,
  type AttestedEnvelope,
} from './attestation-binding.js';

const RELEASED = 'kyb.data_request.released';
const WALLET = 'kyb.business.wallet_address_changed';
const ids = { event_id: '01KAPZ3C9QW8E7R6T5Y4X3X2X1', stream_id: 'dr_1', seq: 4 };

const claimsOf = (extra: Record<string, unknown> = {}): AttestationClaims =>
  ({ ...ids, request_id: ids.stream_id, iss: 'i', aud: 'a', exp: 2, iat: 1, ...extra }) as AttestationClaims;
const envelopeOf = (extra: Partial<AttestedEnvelope> = {}): AttestedEnvelope => ({
  ...ids,
  event: WALLET,
  data: {},
  ...extra,
});

/** The detail of the refusal, or 'ok'. */
function detailOf(claims: AttestationClaims, envelope: AttestedEnvelope, answersClaim?: string): string {
  try {
    checkAttestationBinding(claims, envelope, answersClaim);
    return 'ok';
  } catch (error) {
    if (!(error instanceof KybWebhookError)) throw error;
    expect(error.code).toBe('attestation_relabelled');
    return error.detail ?? '';
  }
}

describe('the detail of a relabelled delivery names what differs', () => {
  it.each<[string, AttestationClaims, AttestedEnvelope, string]>([
    ['another event_id', claimsOf(), envelopeOf({ event_id: 'other' }), 'mismatch in event_id'],
    // The stream is signed twice (stream_id and request_id): both copies differ from the envelope's.
    ['another stream_id', claimsOf(), envelopeOf({ stream_id: 'dr_2' }), 'mismatch in stream_id, request_id'],
    ['another signed request_id', claimsOf({ request_id: 'dr_2' }), envelopeOf(), 'mismatch in request_id'],
    ['another seq', claimsOf(), envelopeOf({ seq: 5 }), 'mismatch in seq'],
    [
      'a type the spec marks unattested',
      claimsOf(),
      envelopeOf({ event: 'kyb.data_request.refused' }),
      'mismatch in event (a type the spec marks unattested)',
    ],
    [
      'a signed event naming another type',
      claimsOf({ event: RELEASED }),
      envelopeOf(),
      'mismatch in event (signed event)',
    ],
    [
      'a signed event_type naming another type',
      claimsOf({ event_type: 'kyb.other' }),
      envelopeOf(),
      'mismatch in event (signed event_type)',
    ],
    [
      'released answers under another type',
      claimsOf({ answers: defaultReleasedAnswers() }),
      envelopeOf(),
      'mismatch in event (the released payload travels only under kyb.data_request.released)',
    ],
    [
      'a release without answers',
      claimsOf(),
      envelopeOf({ event: RELEASED }),
      'mismatch in event (a release whose attestation carries no released answers: looked for a list of answers in ' +
        'the claim "answers", then in any claim; if the service names that claim otherwise, set attestation.answersClaim)',
    ],
    [
      'a data field unlike its signed copy',
      claimsOf({ new_wallet_address: '0xsigned' }),
      envelopeOf({ data: { new_wallet_address: '0xother', note: 'unsigned' } }),
      'mismatch in data.new_wallet_address',
    ],
    [
      'several differences at once, in the order checked',
      claimsOf({ event: 'kyb.other' }),
      envelopeOf({ event_id: 'other', seq: 5, data: { request_id: 'dr_9' } }),
      'mismatch in event_id, seq, event (signed event), data.request_id',
    ],
  ])('%s', (_case, claims, envelope, detail) => {
    expect(detailOf(claims, envelope)).toBe(detail);
  });

  it('names the answersClaim option it searched when a release carries none there', () => {
    expect(
      detailOf(claimsOf({ answers: defaultReleasedAnswers() }), envelopeOf({ event: RELEASED }), 'released_values'),
    ).toBe(
      'mismatch in event (a release whose attestation carries no released answers: looked for a list of answers in ' +
        'the claim "released_values", as attestation.answersClaim says; check that option)',
    );
  });

  it.each<[string, AttestationClaims, AttestedEnvelope]>([
    ['the same ids, no type claim, an attested type', claimsOf(), envelopeOf()],
    ['a signed event naming this type', claimsOf({ event: WALLET }), envelopeOf()],
    ['a signed event_type naming this type', claimsOf({ event_type: WALLET }), envelopeOf()],
    [
      'a release carrying its answers',
      claimsOf({ answers: defaultReleasedAnswers() }),
      envelopeOf({ event: RELEASED }),
    ],
    ['an unknown type (verified all the same)', claimsOf(), envelopeOf({ event: 'kyb.business.sanctions_flagged' })],
  ])('accepts %s', (_case, claims, envelope) => {
    expect(detailOf(claims, envelope)).toBe('ok');
  });
});

describe('typeBindingOf', () => {
  it.each<[string, AttestationClaims, string, string]>([
    ['a signed event naming the type', claimsOf({ event: WALLET }), WALLET, 'bound'],
    ['a signed event_type naming the type', claimsOf({ event_type: WALLET }), WALLET, 'bound'],
    ['a signed event naming another type', claimsOf({ event: RELEASED }), WALLET, 'unbound'],
    ['no type claim', claimsOf(), WALLET, 'unbound'],
  ])('%s: %s', (_case, claims, type, expected) => {
    expect(typeBindingOf(claims, type)).toBe(expected);
  });
});
