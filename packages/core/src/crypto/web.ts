import { base64url } from 'jose';
import type { HmacSecret, PlatformCrypto } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

interface WebHmacSecret extends HmacSecret {
  readonly key: CryptoKey;
}

/** Web Crypto implementation of the hot-path crypto, for Deno, Bun, Workers and browsers. */
export const platformCrypto: PlatformCrypto = {
  name: 'web',
  async importHmacSecret(secret) {
    const key = await crypto.subtle.importKey(
      'raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'],
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
    return base64url.decode(text);
  },
  decodeBase64urlText(text) {
    return utf8.decode(base64url.decode(text));
  },
  verifyRs256: undefined,
};
