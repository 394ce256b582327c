// The JSON-value comparison behind the attestation binding (issue 11 §2, mutation survivors): a data field the claims
// also carry must equal the signed value exactly (arrays item by item, objects key by key in any order), and a
// release is always bound to its type.
import { describe, expect, it } from 'vitest';
import type { AttestationClaims } from './attestation.js';
import { checkAttestationBinding, typeBindingOf } from './attestation-binding.js';
import { KybWebhookError } from '../errors.js';

const IDS = { event_id: '01JD0000000000000000000001', stream_id: 'req_1', seq: 1 };

/** Whether an envelope whose data.field is `inData` passes the binding against claims whose field is `signed`. */
function binds(inData: unknown, signed: unknown): boolean | string {
  const claims = { ...IDS, request_id: IDS.stream_id, field: signed } as unknown as AttestationClaims;
  try {
    // A type this version does not know: no type rule applies, only the data comparison.
    checkAttestationBinding(claims, { ...IDS, event: 'kyb.future.thing', data: { field: inData } });
    return true;
  } catch (error) {
    if (error instanceof KybWebhookError && error.code === 'attestation_relabelled') return false;
    throw error;
  }
}

describe('a data field the claims also carry', () => {
  it.each<[string, unknown, unknown]>([
    ['equal scalars', 'x', 'x'],
    ['equal nested arrays, as distinct values', [[1, 'a'], [2]], [[1, 'a'], [2]]],
    ['equal objects with keys in another order', { b: 1, a: { c: [true] } }, { a: { c: [true] }, b: 1 }],
    ['an empty object each', {}, {}],
    ['an empty array each', [], []],
  ])('binds for %s', (_case, inData, signed) => {
    expect(binds(inData, signed)).toBe(true);
  });

  it.each<[string, unknown, unknown]>([
    ['a string against a number', '1', 1],
    ['null against an object', null, {}],
    ['an object against null', {}, null],
    ['an object against a scalar', { a: 1 }, 1],
    ['a scalar against an object', 1, { a: 1 }],
    // Object.keys(1) is [] like Object.keys({}), and Object.keys('ab') is ['0', '1']: only the type check tells them apart.
    ['a number against an empty object', 1, {}],
    ['an empty object against a number', {}, 1],
    ['a string against an object of its characters', 'ab', { 0: 'a', 1: 'b' }],
    ['an object of characters against the string', { 0: 'a', 1: 'b' }, 'ab'],
    ['an array against an object with the same indexes', [1], { 0: 1 }],
    ['an object against an array', { 0: 1 }, [1]],
    ['an empty object against an empty array', {}, []],
    ['a shorter array', [1, 2], [1, 2, 3]],
    ['a longer array', [1, 2, 3], [1, 2]],
    ['an array differing in its last item', [1, 2], [1, 3]],
    ['an array differing in its first item only', [0, 2], [1, 2]],
    ['an array whose nested item differs', [{ a: 1 }], [{ a: 2 }]],
    ['an object with a key fewer', { a: 1 }, { a: 1, b: 2 }],
    ['an object with a key more', { a: 1, b: 2 }, { a: 1 }],
    ['an object with another key of the same count', { a: 1, b: 2 }, { a: 1, c: 2 }],
    ['an object differing in one value of two', { a: 1, b: 2 }, { a: 1, b: 3 }],
    ['an object whose nested value differs', { a: { b: 1 } }, { a: { b: 2 } }],
    // checkAttestationBinding is public: an envelope built in JavaScript may hold an array with a hole, which must not
    // match the signed value at that index (every() would skip it).
    // eslint-disable-next-line no-sparse-arrays
    ['an array with a hole where the signed array has a value', [, 'b'], ['signed-value', 'b']],
    // eslint-disable-next-line no-sparse-arrays
    ['a signed array with a hole against a value', ['x', 'b'], [, 'b']],
    // JSON.parse makes "__proto__" an own key; the signed object lacks it and must not match through its prototype.
    ['an object with an own "__proto__" key against one without it', JSON.parse('{"__proto__":{}}'), { y: 1 }],
  ])('refuses attestation_relabelled for %s', (_case, inData, signed) => {
    expect(binds(inData, signed)).toBe(false);
  });
});

describe('typeBindingOf', () => {
  it('counts a release as bound even when its claims name no type', () => {
    const claims = { ...IDS, request_id: IDS.stream_id, answers: [] } as unknown as AttestationClaims;
    expect(typeBindingOf(claims, 'kyb.data_request.released')).toBe('bound');
  });

  it('counts another type without a type claim as unbound', () => {
    const claims = { ...IDS, request_id: IDS.stream_id } as unknown as AttestationClaims;
    expect(typeBindingOf(claims, 'kyb.data_request.refused')).toBe('unbound');
  });
});
