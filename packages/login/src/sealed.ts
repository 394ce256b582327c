import { EncryptJWT, jwtDecrypt, errors as joseErrors, type JWTPayload } from 'jose';

/**
 * Sealing of the small values this package keeps in cookies (the login transaction, the session): a JWE with `dir`
 * + A256GCM, i.e. authenticated encryption, so a cookie can be neither read nor altered nor forged by the browser.
 * Each use gets its own key, derived from the configured secret by HKDF-SHA256 with the use as `info`, so a session
 * cookie is never accepted as a transaction and the other way round.
 */
export class Sealer {
  private readonly key: Promise<Uint8Array>;

  constructor(
    secret: string,
    private readonly use: string,
  ) {
    this.key = deriveKey(secret, use);
  }

  async seal(payload: JWTPayload, ttlSeconds: number): Promise<string> {
    return new EncryptJWT(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: this.use })
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .encrypt(await this.key);
  }

  /** The payload, or 'expired' / 'invalid' (tampered, another secret, another use, or not a JWE at all). */
  async open(value: string): Promise<JWTPayload | 'expired' | 'invalid'> {
    try {
      const { payload, protectedHeader } = await jwtDecrypt(value, await this.key, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
      });
      return protectedHeader.cty === this.use ? payload : 'invalid';
    } catch (error) {
      return error instanceof joseErrors.JWTExpired ? 'expired' : 'invalid';
    }
  }
}

async function deriveKey(secret: string, use: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('@kyb-webhooks/login'), info: encoder.encode(use) },
    material,
    256,
  );
  return new Uint8Array(bits);
}
