import { decodeBase64url } from '../base64url.js';
import { decodeHex } from '../hex.js';
import type { HmacSecret, PlatformCrypto } from './types.js';

// ignoreBOM keeps a leading U+FEFF in the text (so JSON.parse refuses it) instead of silently dropping it, as
// Node's Buffer decoder does: both paths see the same text.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
const RS256 = { name: 'RSASSA-PKCS1-v1_5' } as const;

interface WebHmacSecret extends HmacSecret {
  readonly key: CryptoKey;
}

/** Web Crypto implementation of the hot-path crypto, for Deno, Bun, Workers and browsers. */
export const platformCrypto: PlatformCrypto = {
  name: 'web',
  async importHmacSecret(secret) {
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    return { kind: 'hmac-secret', key } as WebHmacSecret;
  },
  async verifyHmac(secret, prefix, body, expected) {
    // subtle.verify compares in constant time, so the MAC never needs to be compared by hand.
    const prefixBytes = new TextEncoder().encode(prefix);
    const message = new Uint8Array(prefixBytes.length + body.length);
    message.set(prefixBytes, 0);
    message.set(body, prefixBytes.length);
    return crypto.subtle.verify('HMAC', (secret as WebHmacSecret).key, expected as Uint8Array<ArrayBuffer>, message);
  },
  decodeBase64url(text) {
    return decodeBase64url(text);
  },
  decodeHex(text) {
    return decodeHex(text);
  },
  decodeUtf8(bytes) {
    return utf8.decode(bytes);
  },
  verifyRs256(key, signingInput, signature) {
    return crypto.subtle.verify(RS256, key, signature as Uint8Array<ArrayBuffer>, encoder.encode(signingInput));
  },
};
