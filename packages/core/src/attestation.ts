import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import { platformCrypto } from '#crypto';
import type { PlatformCrypto } from './crypto/types.js';
import { KybWebhookError, rejection } from './errors.js';

/** The only `typ` an attestation may carry (spec 5.5.1). */
export const ATTESTATION_TYP = 'kyb-attestation+jwt';
/** Fixed by the verifier, never read from the token (spec 5.5.2). */
const ALG = 'RS256';
const KEY_MEMORY_MS = 5_000;
const REQUIRED_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'event_id', 'stream_id', 'seq', 'request_id'] as const;

/** Options of the attestation check: where the KYB keys are and what the claims must say. */
export interface AttestationOptions {
  /** The `{attestation_issuer}` of the spec; `iss` must equal it. */
  issuer: string;
  /** The merchant's client domain UUID; `aud` must equal it (or contain it). */
  audience: string;
  /** `{base_url}/.well-known/kyb-jwks.json`. HTTPS, except for loopback hosts in development. */
  jwksUrl?: string | URL;
  /** An inline JWKS instead of `jwksUrl`, e.g. in tests or air-gapped set-ups. */
  jwks?: JSONWebKeySet;
  /** Clock-skew leeway for `exp`, `iat` and `nbf`, in seconds. Default 30, at most 60. */
  leewaySeconds?: number;
  /** After an unknown `kid` triggered a refetch, no other refetch happens for this long. Default 30 s. */
  jwksCooldownMs?: number;
  /** How long fetched keys are trusted before a refetch. Default 10 minutes. */
  jwksCacheMaxAgeMs?: number;
  /** Timeout of one JWKS fetch. Default 5 s. */
  jwksTimeoutMs?: number;
  /** The `fetch` used for the JWKS; the global one by default. */
  fetch?: typeof fetch;
}

/** The verified claims of an attestation. Claims the spec does not show are kept as `unknown`. */
export interface AttestationClaims extends JWTPayload {
  iss: string;
  aud: string | string[];
  exp: number;
  iat: number;
  event_id: string;
  stream_id: string;
  seq: number;
  request_id: string;
  [claim: string]: unknown;
}

/** The envelope fields an attestation must match (spec 5.5.5). */
export interface EnvelopeIdentity {
  event_id: string;
  stream_id: string;
  seq: number;
  data?: Record<string, unknown>;
}

type KeyResolver = (header: ProtectedHeaderParameters, token: { payload: string; signature: string }) => Promise<CryptoKey>;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Builds the attestation check of spec 5.5, in its exact order: `typ` before any signature work, `alg` pinned to
 * RS256, the key chosen by `kid` from the KYB JWKS (fetched once, cached, refetched on an unknown kid at most once
 * per cooldown), then `iss`, `aud`, `exp`, `iat` with leeway, then event_id, stream_id, seq and request_id
 * against the envelope. Resolves with the verified claims, throws a {@link KybWebhookError} otherwise.
 *
 * On Node the RS256 signature is checked with node:crypto and the registered claims by this module (same rules
 * as jose's `jwtVerify`); elsewhere jose's `jwtVerify` does both. One test suite runs against both paths.
 *
 * @example
 * ```ts
 * const verify = createAttestationVerifier({ issuer, audience, jwksUrl }, Date.now)
 * const claims = await verify(envelope.attestation, envelope)
 * ```
 */
export function createAttestationVerifier(
  options: AttestationOptions,
  now: () => number,
  crypto: PlatformCrypto = platformCrypto,
): (token: string, envelope: EnvelopeIdentity) => Promise<AttestationClaims> {
  const leeway = options.leewaySeconds ?? 30;
  if (!(leeway >= 0 && leeway <= 60)) {
    throw new KybWebhookError('config_invalid', 'attestation.leewaySeconds must be between 0 and 60.');
  }
  if (!options.issuer) throw new KybWebhookError('config_invalid', 'attestation.issuer is required ({attestation_issuer}).');
  if (!options.audience) {
    throw new KybWebhookError('config_invalid', "attestation.audience is required (the merchant's client domain UUID).");
  }
  const resolveKey = createKeyResolver(options);
  const headers = new Map<string, ProtectedHeaderParameters>();
  // The key a header resolved to, for a few seconds: skips jose's asynchronous JWKS lookup on the hot path while
  // keeping key removals from the JWKS effective within KEY_MEMORY_MS of jose noticing them.
  const keys = new Map<string, { key: CryptoKey; until: number }>();

  return async (token, envelope) => {
    const parts = token.split('.');
    if (parts.length !== 3) throw rejection('attestation_invalid', 'not a compact JWS');
    const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];

    // The service signs every attestation with the same few headers (one per kid), so decoded headers are
    // remembered by their encoded text; a handful of entries, never more.
    let header = headers.get(encodedHeader);
    if (!header) {
      try {
        header = Object.freeze(decodeJsonObject(crypto, encodedHeader)) as ProtectedHeaderParameters;
      } catch (cause) {
        throw rejection('attestation_invalid', 'header is not base64url JSON', cause);
      }
      if (headers.size >= 16) headers.delete(headers.keys().next().value as string);
      headers.set(encodedHeader, header);
    }
    // 1. typ first: a token of another kind (a login ID token) is rejected before any key is fetched.
    if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== ATTESTATION_TYP) {
      throw rejection('attestation_invalid_typ', `typ ${JSON.stringify(header.typ ?? null)}`);
    }
    // 2. alg fixed by the verifier: "none", HS256 (key confusion) and everything else fail here.
    if (header.alg !== ALG) throw rejection('attestation_invalid', `alg ${JSON.stringify(header.alg ?? null)}`);
    if (header.crit !== undefined) throw rejection('attestation_invalid', 'crit header parameters are not supported');

    // 3. the key named by kid.
    const time = Date.now();
    const remembered = keys.get(encodedHeader);
    let key: CryptoKey;
    if (remembered && remembered.until > time) {
      key = remembered.key;
    } else {
      key = await resolveKey(header, { payload: encodedPayload, signature: encodedSignature });
      if (keys.size >= 16) keys.delete(keys.keys().next().value as string);
      keys.set(encodedHeader, { key, until: time + KEY_MEMORY_MS });
    }

    // 3–4. signature, then the registered claims.
    const currentDate = new Date(now());
    let claims: JWTPayload;
    if (crypto.verifyRs256) {
      let signature: Uint8Array;
      try {
        signature = crypto.decodeBase64url(encodedSignature);
      } catch (cause) {
        throw rejection('attestation_invalid', 'signature is not base64url', cause);
      }
      if (!crypto.verifyRs256(key, `${encodedHeader}.${encodedPayload}`, signature)) throw rejection('attestation_invalid', 'bad signature');
      try {
        claims = decodeJsonObject(crypto, encodedPayload) as JWTPayload;
      } catch (cause) {
        throw rejection('attestation_invalid', 'claims are not a JSON object', cause);
      }
      checkRegisteredClaims(claims, options, Math.floor(currentDate.getTime() / 1000), leeway);
    } else {
      try {
        ({ payload: claims } = await jwtVerify(token, key, {
          algorithms: [ALG],
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: leeway,
          currentDate,
          requiredClaims: [...REQUIRED_CLAIMS],
        }));
      } catch (cause) {
        throw rejection('attestation_invalid', describeJoseError(cause), cause);
      }
    }
    // jose checks iat only against maxTokenAge; a token issued in the future is refused on both paths here.
    checkIssuedAt(claims, Math.floor(currentDate.getTime() / 1000), leeway);

    // 5. the envelope must carry the signed values, otherwise the delivery was relabelled.
    checkEnvelopeMatches(claims as AttestationClaims, envelope);
    return claims as AttestationClaims;
  };
}

/** A JOSE header or claims set: base64url of a UTF-8 JSON object. */
function decodeJsonObject(crypto: PlatformCrypto, encoded: string): Record<string, unknown> {
  const value: unknown = JSON.parse(crypto.decodeBase64urlText(encoded));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('not a JSON object');
  return value as Record<string, unknown>;
}

function normalizeTyp(typ: string): string {
  // RFC 7515 §4.1.9: media types compare case-insensitively and "application/" may be omitted.
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

function createKeyResolver(options: AttestationOptions): KeyResolver {
  if (options.jwks && options.jwksUrl) {
    throw new KybWebhookError('config_invalid', 'Set attestation.jwksUrl or attestation.jwks, not both.');
  }
  let resolver: KeyResolver;
  if (options.jwks) {
    resolver = createLocalJWKSet(options.jwks) as KeyResolver;
  } else if (options.jwksUrl) {
    const url = new URL(options.jwksUrl);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
      throw new KybWebhookError('config_invalid', 'attestation.jwksUrl must be an https:// URL ({base_url}/.well-known/kyb-jwks.json).');
    }
    resolver = createRemoteJWKSet(url, {
      cooldownDuration: options.jwksCooldownMs ?? 30_000,
      cacheMaxAge: options.jwksCacheMaxAgeMs ?? 600_000,
      timeoutDuration: options.jwksTimeoutMs ?? 5_000,
      ...(options.fetch ? { [customFetch]: options.fetch } : {}),
    }) as KeyResolver;
  } else {
    throw new KybWebhookError('config_invalid', 'attestation needs jwksUrl ({base_url}/.well-known/kyb-jwks.json) or jwks.');
  }
  return async (header, token) => {
    try {
      return await resolver(header, token);
    } catch (cause) {
      if (cause instanceof joseErrors.JWKSNoMatchingKey || cause instanceof joseErrors.JWKSMultipleMatchingKeys) {
        throw rejection('attestation_invalid', `no usable key for kid ${JSON.stringify(header.kid ?? null)}`, cause);
      }
      // A timeout, a network failure or a broken JWKS response: the service should retry later.
      throw rejection('jwks_unavailable', describeJoseError(cause), cause);
    }
  };
}

function describeJoseError(cause: unknown): string {
  if (cause instanceof joseErrors.JOSEError) return `${cause.code}: ${cause.message}`;
  return cause instanceof Error ? cause.name : 'unknown error';
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The registered-claim rules of jose's jwtVerify, for the node:crypto fast path. */
function checkRegisteredClaims(claims: JWTPayload, options: AttestationOptions, now: number, leeway: number): void {
  for (const claim of REQUIRED_CLAIMS) {
    if (!Object.hasOwn(claims, claim)) throw rejection('attestation_invalid', `missing required "${claim}" claim`);
  }
  if (claims.iss !== options.issuer) throw rejection('attestation_invalid', 'unexpected "iss" claim value');
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(options.audience)) throw rejection('attestation_invalid', 'unexpected "aud" claim value');
  for (const claim of ['exp', 'iat', 'nbf'] as const) {
    if (claims[claim] !== undefined && !isNumericDate(claims[claim])) {
      throw rejection('attestation_invalid', `"${claim}" claim must be a number`);
    }
  }
  if (claims.nbf !== undefined && claims.nbf > now + leeway) throw rejection('attestation_invalid', '"nbf" claim timestamp check failed');
  if ((claims.exp as number) <= now - leeway) throw rejection('attestation_invalid', '"exp" claim timestamp check failed');
}

function checkIssuedAt(claims: JWTPayload, now: number, leeway: number): void {
  if (!isNumericDate(claims.iat)) throw rejection('attestation_invalid', '"iat" claim must be a number');
  if (claims.iat > now + leeway) throw rejection('attestation_invalid', '"iat" claim is in the future');
}

function checkEnvelopeMatches(claims: AttestationClaims, envelope: EnvelopeIdentity): void {
  const mismatched: string[] = [];
  if (claims.event_id !== envelope.event_id) mismatched.push('event_id');
  if (claims.stream_id !== envelope.stream_id) mismatched.push('stream_id');
  if (claims.request_id !== envelope.stream_id) mismatched.push('request_id');
  if (claims.seq !== envelope.seq) mismatched.push('seq');
  // data.request_id is unsigned routing information; when present it must name the signed request too.
  const dataRequestId = envelope.data?.['request_id'];
  if (dataRequestId !== undefined && dataRequestId !== claims.request_id) mismatched.push('data.request_id');
  if (mismatched.length > 0) throw rejection('attestation_relabelled', `mismatch in ${mismatched.join(', ')}`);
}
