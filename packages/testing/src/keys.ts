import { exportJWK, exportSPKI, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
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
 * An attestation key from a stored private JWK (RSA, at least 2048 bits), so a dev server and a tool that signs for
 * it agree across restarts. Its `kid` is the JWK's own unless given.
 *
 * @example
 * ```ts
 * const stored = JSON.parse(await readFile('.kyb-webhooks/dev-keys.json', 'utf8'))
 * const key = await importAttestationKey(stored.attestationKey)
 * const signer = await createTestSigner({ key, secrets: stored.secrets })
 * ```
 */
export async function importAttestationKey(
  privateJwk: JWK,
  kid: string | undefined = privateJwk.kid,
): Promise<AttestationKey> {
  if (
    privateJwk?.kty !== 'RSA' ||
    typeof privateJwk.d !== 'string' ||
    typeof privateJwk.n !== 'string' ||
    typeof privateJwk.e !== 'string'
  ) {
    throw new TypeError(
      'importAttestationKey needs a private RSA JWK (kty "RSA" with n, e and d), as exportAttestationKey writes it.',
    );
  }
  if (!kid) throw new TypeError('importAttestationKey: the JWK has no kid; pass one as the second argument.');
  const privateKey = (await importJWK({ ...privateJwk, alg: 'RS256' }, 'RS256', { extractable: true })) as CryptoKey;
  const publicJwk: JWK = { kty: 'RSA', n: privateJwk.n, e: privateJwk.e, kid, alg: 'RS256', use: 'sig' };
  const publicKey = (await importJWK(publicJwk, 'RS256', { extractable: true })) as CryptoKey;
  return { kid, privateKey, publicKey, publicJwk, publicKeyPem: await exportSPKI(publicKey) };
}

/**
 * The private JWK of an attestation key (with its kid), to store it for {@link importAttestationKey}. It is a secret:
 * keep the file out of version control and readable by its owner only.
 *
 * @example
 * ```ts
 * const key = await generateAttestationKey('kyb-dev')
 * await writeFile('.kyb-webhooks/dev-keys.json', JSON.stringify({ attestationKey: await exportAttestationKey(key) }), { mode: 0o600 })
 * ```
 */
export async function exportAttestationKey(key: AttestationKey): Promise<JWK> {
  return { ...(await exportJWK(key.privateKey)), kid: key.kid, alg: 'RS256', use: 'sig' };
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
