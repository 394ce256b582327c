import { isUtf8 } from 'node:buffer';
import { createHmac, KeyObject, timingSafeEqual, verify } from 'node:crypto';
import type { HmacSecret, PlatformCrypto } from './types.js';

interface NodeHmacSecret extends HmacSecret {
  readonly key: KeyObject;
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
    const mac = createHmac('sha256', (secret as NodeHmacSecret).key)
      .update(prefix, 'latin1')
      .update(body)
      .digest();
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  },
  decodeBase64url(text) {
    return Buffer.from(text, 'base64url');
  },
  decodeHex(text) {
    return Buffer.from(text, 'hex');
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
