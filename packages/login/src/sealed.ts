import { EncryptJWT, jwtDecrypt, errors as joseErrors, type JWTPayload } from 'jose';

/**
 * Sealing of the small values this package keeps in cookies (the login transaction, the session): a JWE with `dir`
 * + A256GCM, i.e. authenticated encryption, so a cookie can be neither read nor altered nor forged by the browser.
 * Each use gets its own key, derived from the configured secret by HKDF-SHA256 with the use as `info`, so a session
 * cookie is never accepted as a transaction and the other way round.
 */
export class Sealer {
  /** One key per secret, the current one first: it seals; every one opens (a rotation in progress). */
  private readonly keys: Promise<Uint8Array>[];

  constructor(
    secret: string | readonly string[],
    private readonly use: string,
  ) {
    this.keys = (typeof secret === 'string' ? [secret] : secret).map((each) => deriveKey(each, use));
  }

  async seal(payload: JWTPayload, ttlSeconds: number): Promise<string> {
    return new EncryptJWT(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: this.use })
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .encrypt(await this.keys[0]!);
  }

  /**
   * The payload, or 'expired' / 'invalid' (tampered, another secret, another use, or not a JWE at all). Tried with
   * each secret in turn: a value sealed before a rotation opens until its own lifetime ends.
   */
  async open(value: string): Promise<JWTPayload | 'expired' | 'invalid'> {
    for (const key of this.keys) {
      const opened = await openWith(value, await key, this.use);
      if (opened !== 'invalid') return opened;
    }
    return 'invalid';
  }
}

async function openWith(value: string, key: Uint8Array, use: string): Promise<JWTPayload | 'expired' | 'invalid'> {
  try {
    const { payload, protectedHeader } = await jwtDecrypt(value, key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    return protectedHeader.cty === use ? payload : 'invalid';
  } catch (error) {
    return error instanceof joseErrors.JWTExpired ? 'expired' : 'invalid';
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
