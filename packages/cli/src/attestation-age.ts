import { createPublicKey, verify } from 'node:crypto';
import type { TestEnvelope } from '@kyb-webhooks/testing';
import type { DevKeys } from './dev-keys.js';
import type { DevSigner } from './dev-signer.js';

/**
 * What `verify` and `replay` need to know about the attestation a captured body carries: when it expires, and
 * whether the development key signed it (only then can the CLI issue a fresh one). Read without verifying; the
 * values are never printed except `exp`, as a date.
 *
 * @example
 * ```ts
 * const attestation = carriedAttestation(capture.body)
 * if (attestation && attestation.exp * 1000 < Date.now()) print(expiredNote(attestation, 'replay'))
 * ```
 */
export interface CarriedAttestation {
  token: string;
  /** The claims, as the token states them (unverified). */
  claims: Record<string, unknown>;
  kid: unknown;
  exp: number;
  /** exp - iat when both are numbers and exp is later: how long the service makes its attestations valid. */
  lifetimeSeconds: number;
  envelope: Record<string, unknown>;
}

/**
 * How long an attestation is taken to be valid when a token does not say: the test kit's 10 minutes (the spec gives no
 * lifetime).
 */
const DEFAULT_LIFETIME_SECONDS = 600;

/**
 * The attestation of a captured body, when it carries one with a numeric `exp`.
 *
 * @example
 * ```ts
 * carriedAttestation(new TextEncoder().encode('{"event":"kyb.data_request.released",…,"attestation":"eyJ…"}'))?.exp
 * ```
 */
export function carriedAttestation(body: Uint8Array): CarriedAttestation | undefined {
  let envelope: unknown;
  try {
    envelope = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return undefined;
  const token = (envelope as Record<string, unknown>).attestation;
  if (typeof token !== 'string') return undefined;
  const [header, payload] = token.split('.').map(decodeSegment);
  if (typeof payload?.exp !== 'number' || !Number.isFinite(payload.exp)) return undefined;
  const iat = payload.iat;
  const lifetime =
    typeof iat === 'number' && payload.exp > iat && payload.exp - iat <= 86_400
      ? payload.exp - iat
      : DEFAULT_LIFETIME_SECONDS;
  return {
    token,
    claims: payload,
    kid: header?.kid,
    exp: payload.exp,
    lifetimeSeconds: lifetime,
    envelope: envelope as Record<string, unknown>,
  };
}

/**
 * True when the development key made this token: its kid, issuer and audience, and an RS256 signature that verifies
 * under the key's public half. Only such a token may be re-issued by the CLI; anything else would be a forgery of
 * another signer's statement.
 *
 * @example
 * ```ts
 * if (signedByDevKey(attestation, keys)) body = await reattest(attestation, signer)
 * ```
 */
export function signedByDevKey(attestation: CarriedAttestation, keys: DevKeys): boolean {
  if (
    attestation.kid !== keys.kid ||
    attestation.claims.iss !== keys.issuer ||
    attestation.claims.aud !== keys.audience
  )
    return false;
  const parts = attestation.token.split('.');
  if (parts.length !== 3) return false;
  try {
    const key = createPublicKey({ key: keys.publicJwk, format: 'jwk' });
    return verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2]!, 'base64url'));
  } catch {
    return false;
  }
}

/**
 * The body with its attestation re-issued by the development key: the same claims, a fresh `iat` and `exp` (same
 * lifetime). Everything else keeps its bytes, except a release's `data.attestation_expires_at`, which follows the new
 * `exp` when it named the old one. Undefined when the token is not found verbatim in the body text.
 *
 * @example
 * ```ts
 * const body = await reattest(carriedAttestation(capture.body)!, session.signer, capture.body)
 * ```
 */
export async function reattest(
  attestation: CarriedAttestation,
  signer: DevSigner,
  body: Uint8Array,
): Promise<Uint8Array | undefined> {
  const original = new TextDecoder().decode(body);
  const quoted = JSON.stringify(attestation.token);
  if (!original.includes(quoted)) return undefined;
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + attestation.lifetimeSeconds;
  // The kit computes claims from the envelope, then ours replace them all: the signed statement stays the same.
  const token = await signer.attest(attestation.envelope as unknown as TestEnvelope, {
    claims: { ...attestation.claims, iat, exp },
  });
  let text = original.replace(quoted, JSON.stringify(token));
  const data = attestation.envelope.data as Record<string, unknown> | undefined;
  const expiresAt = data?.attestation_expires_at;
  if (typeof expiresAt === 'string' && Math.abs(Date.parse(expiresAt) - attestation.exp * 1000) < 1000) {
    text = text.replace(
      `"attestation_expires_at":${JSON.stringify(expiresAt)}`,
      `"attestation_expires_at":${JSON.stringify(new Date(exp * 1000).toISOString())}`,
    );
  }
  return new TextEncoder().encode(text);
}

/**
 * Says that an attestation expired, when, and what can be done: `replay --resign` renews one the development key
 * signed; another signer's cannot be renewed here (the service redelivers the event with a fresh one). `signer` is
 * `unknown` when there were no development keys to tell.
 *
 * @example
 * ```ts
 * expiredNote(attestation, 'dev') // 'the attestation expired at 2026-01-01T00:10:00.000Z; captures older than 10 minutes …'
 * ```
 */
export function expiredNote(attestation: CarriedAttestation, signer: 'dev' | 'other' | 'unknown'): string {
  const minutes = Math.round(attestation.lifetimeSeconds / 60);
  const when = `the attestation expired at ${new Date(attestation.exp * 1000).toISOString()}; captures older than ${minutes} minutes cannot be replayed unless it is re-issued`;
  if (signer === 'dev') return `${when}: \`replay --resign\` re-attests it with the development key, which signed it`;
  if (signer === 'other')
    return `${when}, and only its signer can do that (the development key did not sign it): ask the service to redeliver the event`;
  return `${when}: \`replay --resign --keys <file>\` does it when the development keys of that file signed it; otherwise ask the service to redeliver the event`;
}

function decodeSegment(segment: string | undefined): Record<string, unknown> | undefined {
  if (segment === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
