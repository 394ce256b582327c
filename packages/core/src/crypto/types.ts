/**
 * The two crypto operations on the hot path, implemented twice: `node.ts` with node:crypto (a synchronous call
 * on the main thread) and `web.ts` with Web Crypto. On Node, Web Crypto goes through the thread pool and costs
 * about 8× more for HMAC and 2.3× more for RSA verification, so the package's "imports" map picks node.ts under the
 * `node` condition at resolve time. Both pass the same tests (crypto.test.ts, attestation.test.ts).
 */
export interface PlatformCrypto {
  readonly name: 'node' | 'web';
  /** Prepares a secret for repeated HMAC-SHA256 checks. */
  importHmacSecret(secret: string): Promise<HmacSecret>;
  /**
   * Whether `expected` (32 bytes) equals HMAC-SHA256(secret, prefix + body), compared in constant time.
   * `prefix` is the ASCII "<t>." of the signature header.
   */
  verifyHmac(secret: HmacSecret, prefix: string, body: Uint8Array, expected: Uint8Array): boolean | Promise<boolean>;
  /**
   * Decodes base64url (RFC 7515 §2). An attestation needs three decodes per delivery, and on Node the native
   * decoder is several times faster than a JavaScript one. Decoding may be lenient about stray characters: the
   * signature covers the encoded text itself, so leniency can never make a forged token verify.
   */
  decodeBase64url(text: string): Uint8Array;
  /** Decodes base64url to UTF-8 text (a JOSE header or claims set). */
  decodeBase64urlText(text: string): string;
  /**
   * RS256 check of a JWS signing input (ASCII `header.payload`) with node:crypto, or `undefined` where jose's own (Web Crypto) path is used.
   */
  readonly verifyRs256: ((key: CryptoKey, signingInput: string, signature: Uint8Array) => boolean) | undefined;
}

/** An opaque prepared secret. */
export type HmacSecret = { readonly kind: 'hmac-secret' };
