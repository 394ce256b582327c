import { SignJWT, base64url, type JWTPayload } from 'jose';
import type { ReleasedAnswerEntry, TestEnvelope } from './fixtures.js';
import { defaultReleasedAnswers } from './fixtures.js';
import type { AttestationKey } from './keys.js';
import { randomHex } from './random.js';

/**
 * The JWT `typ` of an attestation (spec 5.5.1).
 *
 * @example
 * ```ts
 * const token = await signer.attest(envelope, { header: { typ: ATTESTATION_TYP.replace('kyb-', '') } }) // a wrong typ
 * ```
 */
export const ATTESTATION_TYP = 'kyb-attestation+jwt';

/**
 * A JWT protected header. Fields set to `undefined` are left out, so `{ kid: undefined }` makes a token without kid.
 *
 * @example
 * ```ts
 * const header: TokenHeader = { typ: 'JWT' } // pass as `header` to attest a token of the wrong kind
 * ```
 */
export interface TokenHeader {
  typ?: string | undefined;
  alg?: string | undefined;
  kid?: string | undefined;
  [parameter: string]: unknown;
}

/** Who issues attestations and for whom, plus the clock: everything claims need beyond the envelope. */
export interface AttestationContext {
  key: AttestationKey;
  issuer: string;
  audience: string;
  nowMs: number;
}

/**
 * Options of an attestation. `claims` and `header` are applied last and win, which is how tests build tokens that
 * are wrong in exactly one way.
 *
 * @example
 * ```ts
 * await signer.attest(envelope, { claims: { exp: 1 } })            // expired
 * await signer.attest(envelope, { claims: { seq: envelope.seq + 1 } }) // relabelled
 * await signer.attest(envelope, { header: { typ: 'JWT' } })         // wrong kind of token
 * ```
 */
export interface AttestOptions {
  /** Released answers for `kyb.data_request.released`; defaults to {@link defaultReleasedAnswers}. */
  answers?: ReleasedAnswerEntry[];
  /** Lifetime from iat; default 600 (10 minutes). */
  expiresInSeconds?: number;
  /** Added to or replacing the computed claims; `undefined` removes a claim. */
  claims?: Record<string, unknown>;
  /** Merged over `{ typ: 'kyb-attestation+jwt', alg: 'RS256', kid }`; `undefined` removes a parameter. */
  header?: TokenHeader;
}

/** The claims the service signs for `envelope` (spec 2.3, 2.8): the stream appears as stream_id and request_id. */
export function attestationClaims(
  envelope: Pick<TestEnvelope, 'event' | 'event_id' | 'stream_id' | 'seq'>,
  context: Omit<AttestationContext, 'key'>,
  options: Pick<AttestOptions, 'answers' | 'expiresInSeconds' | 'claims'> = {},
): Record<string, unknown> {
  const iat = Math.floor(context.nowMs / 1000);
  const claims: Record<string, unknown> = {
    iss: context.issuer,
    aud: context.audience,
    iat,
    exp: iat + (options.expiresInSeconds ?? 600),
    event_id: envelope.event_id,
    stream_id: envelope.stream_id,
    seq: envelope.seq,
    request_id: envelope.stream_id,
  };
  if (envelope.event === 'kyb.data_request.released') claims.answers = options.answers ?? defaultReleasedAnswers();
  return withoutUndefined({ ...claims, ...options.claims });
}

/**
 * Signs claims as an attestation. With the header's alg left at RS256 this is an ordinary jose `SignJWT`; with any
 * other alg the token is still RSA-SHA256 signed, so the header lies about its algorithm — what a verifier that reads
 * alg from the header would be fooled by.
 */
export async function signAttestation(
  claims: Record<string, unknown>,
  key: AttestationKey,
  headerOverrides: TokenHeader = {},
): Promise<string> {
  const header = withoutUndefined({ typ: ATTESTATION_TYP, alg: 'RS256', kid: key.kid, ...headerOverrides });
  if (header.alg === 'RS256') {
    return new SignJWT(claims as JWTPayload).setProtectedHeader({ ...header, alg: 'RS256' }).sign(key.privateKey);
  }
  const signingInput = `${encodeJson(header)}.${encodeJson(claims)}`;
  const signature = await crypto.subtle.sign(
    'RSASSA-PKCS1-v1_5',
    key.privateKey,
    new TextEncoder().encode(signingInput),
  );
  return `${signingInput}.${base64url.encode(new Uint8Array(signature))}`;
}

/** A login-server ID token (spec 2.2): right key, wrong kind of token. */
export async function signLoginToken(
  key: AttestationKey,
  context: { loginIssuer: string; audience: string; nowMs: number },
  options: { sub?: string; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const iat = Math.floor(context.nowMs / 1000);
  const claims = withoutUndefined({
    iss: context.loginIssuer,
    sub: options.sub ?? `svcid:0x${randomHex(20)}`,
    aud: context.audience,
    iat,
    auth_time: iat,
    exp: iat + 3600,
    ...options.claims,
  });
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ typ: 'JWT', alg: 'RS256', kid: key.kid })
    .sign(key.privateKey);
}

/** An `alg: none` token with an otherwise correct attestation header and claims, and an empty signature. */
export function unsignedAttestation(claims: Record<string, unknown>, kid: string): string {
  return `${encodeJson({ typ: ATTESTATION_TYP, alg: 'none', kid })}.${encodeJson(claims)}.`;
}

/**
 * The classic key-confusion token: alg HS256, MACed with the bytes of the RSA public key. A verifier that takes alg
 * from the header and hands it the "key" it holds for kid accepts it.
 */
export async function signHs256WithPublicKey(
  claims: Record<string, unknown>,
  key: AttestationKey,
  keyFormat: 'pem' | 'jwk' = 'pem',
): Promise<string> {
  const secret = new TextEncoder().encode(keyFormat === 'pem' ? key.publicKeyPem : JSON.stringify(key.publicJwk));
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ typ: ATTESTATION_TYP, alg: 'HS256', kid: key.kid })
    .sign(secret);
}

function encodeJson(value: unknown): string {
  return base64url.encode(new TextEncoder().encode(JSON.stringify(value)));
}

function withoutUndefined<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}
