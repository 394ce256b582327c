// A data field that the attestation's claims also carry must equal the signed value, compared as JSON values
// (issue 11 §2): nested objects and arrays included, key order ignored. One case per shape of difference.
import { describe, expect, it } from 'vitest';
import type { AttestationClaims } from './attestation.js';
import { checkAttestationBinding } from './attestation-binding.js';

const ids = { event_id: '01KAPZ3C9QW8E7R6T5Y4X3X2X1', stream_id: 'biz_1', seq: 4 };
const envelopeWith = (value: unknown) => ({
  ...ids,
  event: 'kyb.business.wallet_address_changed',
  data: { previous_wallet_address: '0xold', detail: value },
});
const claimsWith = (value: unknown) =>
  ({
    ...ids,
    request_id: ids.stream_id,
    iss: 'i',
    aud: 'a',
    exp: 2,
    iat: 1,
    detail: value,
  }) as unknown as AttestationClaims;

function outcome(signed: unknown, sent: unknown): string {
  try {
    checkAttestationBinding(claimsWith(signed), envelopeWith(sent));
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? 'threw';
  }
}

describe('data fields the claims also carry', () => {
  it.each<[string, unknown, unknown]>([
    ['equal strings', 'x', 'x'],
    ['equal objects in another key order', { a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }],
    ['equal arrays', [1, 'two', null], [1, 'two', null]],
    ['null and null', null, null],
  ])('accepts %s', (_case, signed, sent) => {
    expect(outcome(signed, sent)).toBe('ok');
  });

  it.each<[string, unknown, unknown]>([
    ['another string', 'x', 'y'],
    ['a number for its string', '1', 1],
    ['null for an object', { a: 1 }, null],
    ['an object for null', null, { a: 1 }],
    ['an array for an object with the same indexes', { 0: 'a' }, ['a']],
    ['an object for an array', ['a'], { 0: 'a' }],
    ['a shorter array', [1, 2], [1]],
    ['a longer array', [1], [1, 2]],
    ['an array with one item changed', [1, 2, 3], [1, 2, 4]],
    ['an array whose first item differs only', [0, 2], [1, 2]],
    ['an object with a key more', { a: 1 }, { a: 1, b: 2 }],
    ['an object with a key less', { a: 1, b: 2 }, { a: 1 }],
    ['an object with a key renamed', { a: 1 }, { b: 1 }],
    ['an object with one nested value changed', { a: { b: 1, c: 2 } }, { a: { b: 1, c: 3 } }],
    ['an object with an undefined-valued key instead of a missing one', { a: 1, b: 2 }, { a: 1, c: undefined }],
  ])('rejects %s as attestation_relabelled', (_case, signed, sent) => {
    expect(outcome(signed, sent)).toBe('attestation_relabelled');
  });
});
