// The PlatformCrypto contract (types.ts), checked on both implementations alike: each names itself, prepares an
// opaque HMAC secret, answers false (never throws) for a MAC of the wrong length, keeps a byte order mark as U+FEFF,
// refuses invalid UTF-8, decodes base64url and hex, and answers the RS256 check with what the signature says.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBase64url } from '../base64url.js';
import { platformCrypto as nodeCrypto } from './node.js';
import { platformCrypto as webCrypto } from './web.js';
import type { PlatformCrypto } from './types.js';

const secret = 'contract-secret';
const prefix = '1763812800.';
const body = new TextEncoder().encode('{"event":"kyb.test"}');
const rightMac = new Uint8Array(createHmac('sha256', secret).update(prefix).update(body).digest());

describe.each<[string, PlatformCrypto]>([
  ['node', nodeCrypto],
  ['web', webCrypto],
])('platform crypto %s', (name, platform) => {
  it('names itself', () => {
    expect(platform.name).toBe(name);
  });

  it('prepares an HMAC secret of the kind the contract names', async () => {
    expect((await platform.importHmacSecret(secret)).kind).toBe('hmac-secret');
  });

  it.each<[string, Uint8Array, boolean]>([
    ['the right MAC', rightMac, true],
    ['the right MAC cut to 31 bytes', rightMac.subarray(0, 31), false],
    ['the right MAC with a byte more', new Uint8Array([...rightMac, 0]), false],
  ])('answers %s with %s', async (_case, mac, expected) => {
    const prepared = await platform.importHmacSecret(secret);
    expect(await platform.verifyHmac(prepared, prefix, body, mac)).toBe(expected);
  });

  it('MACs the prefix and then the body, not the body alone', async () => {
    const prepared = await platform.importHmacSecret(secret);
    const bodyOnly = new Uint8Array(createHmac('sha256', secret).update(body).digest());
    expect(await platform.verifyHmac(prepared, prefix, body, bodyOnly)).toBe(false);
  });

  it('keeps a byte order mark as U+FEFF and refuses invalid UTF-8', () => {
    expect(platform.decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe('\uFEFF{}');
    expect(() => platform.decodeUtf8(new Uint8Array([0x7b, 0xc3, 0x7d]))).toThrow(TypeError);
  });

  it('decodes canonical base64url to its bytes', () => {
    expect([...platform.decodeBase64url('-_8')!]).toEqual([0xfb, 0xff]);
    expect(platform.decodeBase64url('')?.length).toBe(0);
  });

  it.each([
    ['spare bits that are not zero', 'AB'],
    ['a length one more than a multiple of 4', 'AAAAA'],
    ['padding', 'AA=='],
    ['standard base64', 'a+b/'],
    ['a space', 'AA AA'],
    ['a dot', 'AA.A'],
    // Buffer reads a character past U+00FF by its low byte: U+0141 as "A".
    ['a character whose low byte is in the alphabet', 'AQ\u0141I'],
    ['a KELVIN SIGN', '\u212AAAA'],
  ])('answers undefined for base64url with %s', (_case, text) => {
    expect(platform.decodeBase64url(text)).toBeUndefined();
  });

  // 12,288 bytes are 16,384 characters: a UTF-8 encoder given exactly that many bytes of room fills them all.
  it.each([1_000, 10_000, 12_288, 40_000])(
    'decodes %i bytes, and refuses them with one character past U+007F',
    (size) => {
      const text = Buffer.alloc(size, 7).toString('base64url');
      expect(platform.decodeBase64url(text)?.length).toBe(size);
      expect(platform.decodeBase64url(`${text.slice(0, -2)}\u0141${text.slice(-1)}`)).toBeUndefined();
      expect(platform.decodeBase64url(`\u0141${text.slice(1)}`)).toBeUndefined();
      expect(platform.decodeBase64url(`\u00e9${text.slice(1)}`)).toBeUndefined();
    },
  );

  it('decodes exactly the text isBase64url accepts, to the bytes whose encoding it is', () => {
    // The alphabet three times over, every other ASCII character, and some past it (U+0141's low byte is "A").
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));
    const characters = fc.constantFrom(
      ...[...alphabet.repeat(3), ...ascii, ...'\u00e9\u00ff\u0100\u0141\u0130\u212a\uff21\ud83d'],
    );
    fc.assert(
      fc.property(
        fc.array(characters, { maxLength: 24 }).map((chars) => chars.join('')),
        (text) => {
          const bytes = platform.decodeBase64url(text);
          expect(bytes !== undefined).toBe(isBase64url(text));
          if (bytes) expect(Buffer.from(bytes).toString('base64url')).toBe(text);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('decodes hex of either case to its bytes', () => {
    expect([...platform.decodeHex('00ff10Ab9c')!]).toEqual([0x00, 0xff, 0x10, 0xab, 0x9c]);
  });

  it.each([
    ['an odd number of digits', '00f'],
    ['a letter past f', '0g'],
    ['a space', '0 00'],
    // Buffer reads a character past U+00FF by its low byte: U+0130 as "0".
    ['a character whose low byte is a hex digit', '\u01300'],
  ])('answers undefined for hex with %s', (_case, text) => {
    expect(platform.decodeHex(`ab${text}`)).toBeUndefined();
  });

  it('decodes exactly an even number of hex digits, to the bytes they spell', () => {
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));
    const characters = fc.constantFrom(...[...'0123456789abcdefABCDEF'.repeat(6), ...ascii, ...'\u00e9\u0130\u0141']);
    fc.assert(
      fc.property(
        fc.array(characters, { maxLength: 12 }).map((chars) => chars.join('')),
        (text) => {
          const bytes = platform.decodeHex(text);
          expect(bytes !== undefined).toBe(/^(?:[0-9a-fA-F]{2})*$/.test(text));
          if (bytes) expect(Buffer.from(bytes).toString('hex')).toBe(text.toLowerCase());
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('answers the RS256 check true for a genuine signature and false for another input', async () => {
    const pair = await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    );
    const input = 'eyJhbGciOiJSUzI1NiJ9.e30';
    const signature = new Uint8Array(
      await crypto.subtle.sign('RSASSA-PKCS1-v1_5', pair.privateKey, new TextEncoder().encode(input)),
    );
    expect(await platform.verifyRs256(pair.publicKey, input, signature)).toBe(true);
    expect(await platform.verifyRs256(pair.publicKey, `${input}x`, signature)).toBe(false);
  });
});
