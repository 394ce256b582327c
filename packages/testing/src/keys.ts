import { exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { randomHex } from './random.js';

/**
 * An RS256 attestation key as the service holds it: the private half signs, the public half is published in the
 * KYB JWKS under `kid`.
 *
 * @example
 * ```ts
 * const key: AttestationKey = await generateAttestationKey('kyb-2026-01')
 * ```
 */
export interface AttestationKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The public JWK with `kid`, `alg: 'RS256'` and `use: 'sig'`, as a JWKS entry. */
  publicJwk: JWK;
  /** The public key as SPKI PEM: what a key-confusion attacker would feed to HS256 as the HMAC secret. */
  publicKeyPem: string;
}

/**
 * A JSON Web Key Set, as served at /.well-known/kyb-jwks.json.
 *
 * @example
 * ```ts
 * const jwks: Jwks = { keys: [signer.publicJwk] }
 * ```
 */
export interface Jwks {
  keys: JWK[];
}

/**
 * Generates a fresh RSA-2048 RS256 key pair with a kid. Extractable, because the public half is exported as JWK
 * and PEM; the private half only ever signs test tokens.
 *
 * @param kid - defaults to a random `kyb-test-…` id, so two keys never collide in one JWKS.
 * @example
 * ```ts
 * const key = await generateAttestationKey()
 * const jwks = { keys: [key.publicJwk] }
 * ```
 */
export async function generateAttestationKey(kid: string = `kyb-test-${randomHex(6)}`): Promise<AttestationKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicKey, publicJwk, publicKeyPem: await exportSPKI(publicKey) };
}

/**
 * A random webhook endpoint secret: 32 bytes from the platform CSPRNG, hex encoded behind a `whsec_` prefix (the
 * prefix makes a leaked test secret easy to recognise in logs).
 *
 * @example
 * ```ts
 * const secrets = { '1': randomSecret(), '2': randomSecret() }
 * ```
 */
export function randomSecret(): string {
  return `whsec_${randomHex(32)}`;
}
