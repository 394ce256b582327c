/**
 * The crypto operations on the hot path, implemented twice: `node.ts` with node:crypto (a synchronous call
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
   * Decodes canonical unpadded base64url (RFC 7515 §2, as `isBase64url` in base64url.ts defines it), or answers
   * undefined for any other text: padding, `+` or `/`, other characters, or spare bits that are not zero. Native
   * decoders are lenient in different ways, so the check belongs to the decoding: each byte string then has exactly
   * one accepted encoding on every runtime. An attestation needs three decodes per delivery.
   */
  decodeBase64url(text: string): Uint8Array | undefined;
  /**
   * Decodes hex of either case (the signature's 64 digits), or answers undefined for text that is not an even number
   * of hex digits. On Node, Buffer's decoder spares each new process the compiling of a JavaScript loop.
   */
  decodeHex(text: string): Uint8Array | undefined;
  /**
   * Decodes UTF-8 strictly: invalid UTF-8 throws, and a leading byte order mark is kept as U+FEFF (so `JSON.parse`
   * refuses it) rather than stripped, the same on every runtime.
   */
  decodeUtf8(bytes: Uint8Array): string;
  /**
   * RS256 (RSASSA-PKCS1-v1_5 with SHA-256) check of a JWS signing input, which is ASCII `header.payload`: with
   * node:crypto synchronously on Node, with Web Crypto elsewhere. Only the signature: every other rule (key size,
   * encodings, claims) is applied once, by attestation.ts, for both.
   */
  verifyRs256(key: CryptoKey, signingInput: string, signature: Uint8Array): boolean | Promise<boolean>;
}

/** An opaque prepared secret. */
export type HmacSecret = { readonly kind: 'hmac-secret' };
