import { isUtf8 } from 'node:buffer';
import { createHmac, KeyObject, timingSafeEqual, verify } from 'node:crypto';
import type { HmacSecret, PlatformCrypto } from './types.js';

interface NodeHmacSecret extends HmacSecret {
  readonly key: KeyObject;
}

// The last character of canonical base64url text whose length is 2 or 3 more than a multiple of 4: the bits after the
// last whole byte (4 or 2 of them) are zero, so that each byte string has one encoding (base64url.ts, isBase64url).
const LAST_OF_ONE_BYTE = 'AQgw';
const LAST_OF_TWO_BYTES = 'AEIMQUYcgkosw048';

// isAscii's output buffer: TextEncoder reports the characters read and the bytes written, both the text's length only
// for ASCII (a character past U+007F takes more bytes, or is not read once the buffer is full).
const encoder = new TextEncoder();
const MAX_SCRATCH_BYTES = 16 * 1024;
const asciiScratch = new Uint8Array(MAX_SCRATCH_BYTES);

/**
 * Whether `text` is all ASCII: TextEncoder's native encoder writes exactly one byte per character only then. Half the
 * instructions of `Buffer.byteLength(text, 'utf8')` on a token's 1,400 characters; text longer than 16 KiB (never a
 * genuine token's segment) takes that way, so one scratch buffer of that size serves every call.
 */
function isAscii(text: string): boolean {
  if (text.length > MAX_SCRATCH_BYTES) return Buffer.byteLength(text, 'utf8') === text.length;
  const { read, written } = encoder.encodeInto(text, asciiScratch);
  return read === text.length && written === text.length;
}

// Converting a CryptoKey to a KeyObject costs more than the verification; keys come from the JWKS key cache and are
// the same objects for as long as the cache lives, so a WeakMap keeps one KeyObject per CryptoKey.
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: CryptoKey): KeyObject {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = KeyObject.from(key);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

/** node:crypto implementation of the hot-path crypto; selected under the `node` export condition. */
export const platformCrypto: PlatformCrypto = {
  name: 'node',
  async importHmacSecret(secret) {
    // A KeyObject, not the secret's bytes: createHmac with a Buffer key cost every delivery about 100,000 more
    // instructions on Node 24 (bench, insn section).
    const key = KeyObject.from(
      await globalThis.crypto.subtle.importKey(
        'raw',
        new TextEncoder().encode(secret),
        { name: 'HMAC', hash: 'SHA-256' },
        true,
        ['sign'],
      ),
    );
    return { kind: 'hmac-secret', key } as NodeHmacSecret;
  },
  verifyHmac(secret, prefix, body, expected) {
    // The prefix in UTF-8, as the Web path encodes it (it is ASCII): the default encoding, which node:crypto checks
    // without the lookup any named one takes.
    const mac = createHmac('sha256', (secret as NodeHmacSecret).key)
      .update(prefix)
      .update(body)
      .digest();
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  },
  decodeBase64url(text) {
    // Buffer's decoder is lenient: it skips characters outside the alphabet, reads `+` and `/` as `-` and `_`, and a
    // character past U+00FF by its low byte. Native checks that allocate nothing refuse each of those (a skipped
    // character leaves fewer bytes than the length promises), instead of a regular expression over the text, which
    // costs 12 instructions a character (docs/architecture.md §3.5). The contract test holds it to isBase64url.
    const length = text.length;
    if ((length & 3) === 1 || text.includes('+') || text.includes('/') || !isAscii(text)) return undefined;
    const bytes = Buffer.from(text, 'base64url');
    if (bytes.length !== (length * 3) >> 2) return undefined;
    const remainder = length & 3;
    if (remainder === 0 || (remainder === 2 ? LAST_OF_ONE_BYTE : LAST_OF_TWO_BYTES).includes(text[length - 1]!))
      return bytes;
    return undefined;
  },
  decodeHex(text) {
    // Buffer's decoder stops at the first pair that is not two hex digits, and reads a character past U+00FF by its
    // low byte: fewer bytes than the length promises, or text that is not ASCII, is refused.
    const bytes = Buffer.from(text, 'hex');
    // (isAscii's TextEncoder costs a new process more than it saves on 64 characters.)
    return bytes.length * 2 === text.length && Buffer.byteLength(text, 'utf8') === text.length ? bytes : undefined;
  },
  decodeUtf8(bytes) {
    // Buffer's decoder would replace bad sequences with U+FFFD; isUtf8 makes it as strict as a fatal TextDecoder
    // and is faster than one. toString keeps a BOM, as the Web path's TextDecoder (ignoreBOM: true) does.
    if (!isUtf8(bytes)) throw new TypeError('Not valid UTF-8.');
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return buffer.toString('utf8');
  },
  verifyRs256(key, signingInput, signature) {
    // The signing input is base64url text, so latin1 is its exact bytes and the native encoder is the fastest.
    return verify('RSA-SHA256', Buffer.from(signingInput, 'latin1'), keyObjectOf(key), signature);
  },
};
