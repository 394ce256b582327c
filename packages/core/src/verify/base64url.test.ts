import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, isBase64url } from './base64url.js';

describe('strict base64url', () => {
  it.each([
    ['', true],
    ['eyJhIjoxfQ', true],
    ['AQAB', true],
    ['-_-_', true],
    ['AA', true],
    ['AAA', true],
    ['AB', false], // non-zero spare bits after one byte
    ['AAB', false], // non-zero spare bits after two bytes
    ['A', false], // length 1 mod 4
    ['AAAAA', false],
    ['AA==', false], // padding
    ['a+b/', false], // standard base64
    ['AA AA', false],
    ['AA\nAA', false],
    ['AA.A', false],
    ['ÀAAA', false],
    ['\u212AAAA', false],
  ] as const)('isBase64url(%j) is %s', (text, expected) => {
    expect(isBase64url(text)).toBe(expected);
  });

  it('accepts exactly the canonical encodings: those that survive a decode and re-encode unchanged', () => {
    const characters = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= .\n\u00e9\u212a'.split(''),
    );
    fc.assert(
      fc.property(
        fc.array(characters, { maxLength: 24 }).map((chars) => chars.join('')),
        (text) => {
          expect(isBase64url(text)).toBe(Buffer.from(text, 'base64url').toString('base64url') === text);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('decodes every byte string back from its encoding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const encoded = Buffer.from(bytes).toString('base64url');
        expect(isBase64url(encoded)).toBe(true);
        expect(decodeBase64url(encoded)).toEqual(new Uint8Array(bytes));
      }),
      { numRuns: 5_000 },
    );
  });

  it('refuses to decode what it does not accept', () => {
    expect(decodeBase64url('AB')).toBeUndefined();
    expect(decodeBase64url('AA==')).toBeUndefined();
  });
});
