import { describe, expect, it } from 'vitest';
import { readHeader } from './headers.js';

describe('readHeader', () => {
  it.each<[string, Record<string, string | string[]>, string | undefined]>([
    ['an exact lower-case key', { 'service-kyb-signature': 'a' }, 'a'],
    ['a mixed-case key', { 'Service-KYB-Signature': 'a' }, 'a'],
    ['a repeated header, joined so the strict grammar refuses it', { 'service-kyb-signature': ['a', 'b'] }, 'a, b'],
    ['a key with a KELVIN SIGN for k (Unicode case folding)', { 'service-\u212ayb-signature': 'a' }, undefined],
    ['a key with a dotted capital I', { 'L\u0130NK': 'a' }, undefined],
    ['another header of the same length', { 'Service-KYB-Signaturs': 'a' }, undefined],
  ])('reads %s', (_name, record, expected) => {
    const name = Object.keys(record)[0]!.startsWith('L') ? 'link' : 'service-kyb-signature';
    expect(readHeader(record, name)).toBe(expected);
  });

  it('reads a Web Headers object', () => {
    expect(readHeader(new Headers({ 'Service-KYB-Signature': 'a' }), 'service-kyb-signature')).toBe('a');
  });
});
