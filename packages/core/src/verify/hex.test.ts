import { describe, expect, it } from 'vitest';
import { decodeHex } from './hex.js';

describe('decodeHex (the Web path of a signature MAC)', () => {
  it('decodes both cases to the same bytes', () => {
    expect([...decodeHex('00ff10ab9C7F')!]).toEqual([0x00, 0xff, 0x10, 0xab, 0x9c, 0x7f]);
    expect(decodeHex('ABCDEF')).toEqual(decodeHex('abcdef'));
  });

  it.each([
    ['a letter past f', '0g'],
    ['a digit after a non-digit', 'x0'],
    ['a character past ASCII', '0\u00e9'],
    ['a space', '0 '],
  ])('answers undefined for %s', (_case, hex) => {
    expect(decodeHex(`00${hex}`)).toBeUndefined();
  });

  it('decodes nothing from nothing, and refuses an odd number of digits', () => {
    expect(decodeHex('')).toEqual(new Uint8Array(0));
    expect(decodeHex('0a1')).toBeUndefined();
  });
});
