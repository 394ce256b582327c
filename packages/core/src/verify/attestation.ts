import type { JSONWebKeySet, JWTPayload, ProtectedHeaderParameters } from 'jose';
import { platformCrypto } from '#crypto';
import type { PlatformCrypto } from './crypto/types.js';
import { bindAttestation, type AttestationClaims, type AttestedEnvelope } from './attestation-binding.js';
import { checkRegisteredClaims } from './attestation-claims.js';
import type { LocatedAnswerList } from '../events/released-answers.js';
import { KybWebhookError, rejection } from '../errors.js';
import { MAX_TIMER_MS, optionRules, strayWhitespaceProblem } from '../option-rules.js';
import { validateArgument } from '../option-validation.js';
import { readClock } from './clock.js';
import { createInlineKeySource, createRemoteKeySource, type VerificationKey, type KeySource } from './jwks.js';
import type { ReceiverTelemetry } from '../telemetry/observers.js';

/**
 * The only `typ` an attestation may carry (spec 5.5.1).
 *
 * @example
 * ```ts
 * new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: ATTESTATION_TYP, kid })
 * ```
 */
export const ATTESTATION_TYP = 'kyb-attestation+jwt';
/** Fixed by the verifier, never read from the token (spec 5.5.2). */
const ALG = 'RS256';
const APPLICATION_TYP = `application/${ATTESTATION_TYP}`;
// Decoded headers are remembered by their encoded text; a genuine one is about 100 characters, and a huge
// attacker-made header is not worth keeping.
const MAX_REMEMBERED_HEADERS = 16;
const MAX_REMEMBERED_HEADER_LENGTH = 1024;

/**
 * Options of the attestation check: where the KYB keys are and what the claims must say.
 *
 * @example
 * ```ts
 * const attestation: AttestationOptions = {
 *   issuer: 'https://kyb.example.com',
 *   audience: process.env.KYB_AUDIENCE!,
 *   jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json',
 *   jwksMaxStaleMs: 6 * 3_600_000, // trust the last good keys for 6 h of JWKS outage instead of 12
 * }
 * ```
 */
export interface AttestationOptions {
  /** The `{attestation_issuer}` of the spec; `iss` must equal it. */
  issuer: string;
  /** The merchant's client domain UUID; `aud` must equal it, or be an array with a member equal to it (whole strings). */
  audience: string;
  /** `{base_url}/.well-known/kyb-jwks.json`. HTTPS, except for loopback hosts in development. */
  jwksUrl?: string | URL;
  /** An inline JWKS instead of `jwksUrl`, e.g. in tests or air-gapped set-ups. */
  jwks?: JSONWebKeySet;
  /** Clock-skew leeway for `exp`, `iat` and `nbf`, in seconds. Default 30, at most 60. */
  leewaySeconds?: number;
  /**
   * After any JWKS fetch ends, successful or failed, no other starts for this long: an unknown `kid` refetches at
   * most once per cooldown, and an outage of the JWKS host costs one fetch per cooldown however many deliveries
   * arrive (those that need keys we do not have get 503 `jwks_unavailable` meanwhile). Default 30 s.
   */
  jwksCooldownMs?: number;
  /**
   * How long fetched keys are used before a refresh, so a key the service removes stops verifying within this
   * time while its JWKS host is up (while it is down, see `jwksMaxStaleMs`). The delivery that finds the keys too
   * old waits for the refresh; concurrent deliveries share that one fetch. Default 10 minutes.
   */
  jwksCacheMaxAgeMs?: number;
  /**
   * How long the last good key set keeps verifying the kids it has, counted from its successful fetch, while
   * refreshes fail (`jwksUrl` only). Past it every attested delivery gets 503 `jwks_unavailable` (the service
   * retries for about 9 hours) until a fetch succeeds. At least `jwksCacheMaxAgeMs`. Default 12 hours.
   */
  jwksMaxStaleMs?: number;
  /**
   * Largest JWKS response accepted, in bytes. The body is read as a stream and dropped as soon as it passes the
   * cap (never buffered whole); an oversized response is a failed fetch. Default 256 KiB.
   */
  jwksMaxBytes?: number;
  /** Timeout of one JWKS fetch, headers and body, through an AbortSignal. Default 5 s. */
  jwksTimeoutMs?: number;
  /** The `fetch` used for the JWKS; the global one by default. Redirects are not followed. */
  fetch?: typeof fetch;
  /**
   * The claim of a release's attestation that holds the released answers (spec 2.8 does not show its name). Default:
   * `answers`, else the first claim holding a list of answer entries (name, subject_type, subject, value). A release
   * whose attestation carries none there is refused (`attestation_relabelled`), with a log line naming this option.
   */
  answersClaim?: string;
}

/**
 * How one token is checked.
 *
 * `fetched: true` is for a token the caller pulled itself from the KYB API (a release pull, an event fetched to fill a
 * gap or to recover): every rule holds except `exp`. The spec's API answers "the same attestation the webhook would
 * carry" for as long as the release is retained, so a token pulled after its `exp` is still the service's genuine
 * statement; `exp` bounds how long a *pushed* delivery can be replayed to the endpoint, a threat the pull does not
 * have (the caller chose the URL and authenticated the call with its API key). `iat` in the future is still refused,
 * and dedupe still applies. Never set it for bytes that arrived at the webhook endpoint.
 *
 * @example
 * ```ts
 * const claims = await verify(event.attestation, event, { fetched: true }) // event from client.events(requestId)
 * ```
 */
export interface VerifyAttestationOptions {
  fetched?: boolean;
}

export type { AttestationClaims } from './attestation-binding.js';

/**
 * The envelope an attestation must be bound to (spec 5.5.5 and {@link checkAttestationBinding}): its ids, its type
 * and its data.
 */
export type EnvelopeIdentity = AttestedEnvelope;

/**
 * The rule for `attestation.jwksUrl`: {base_url}/.well-known/kyb-jwks.json, https (http on loopback only), without
 * credentials (the JWKS is public). createReceiver's option checks and {@link createAttestationVerifier} both run it.
 *
 * @example
 * ```ts
 * validateArgument('createAttestationVerifier', 'attestation.jwksUrl', 'https://api.kyb.example.com/.well-known/kyb-jwks.json', jwksUrlRule)
 * ```
 */
export const jwksUrlRule = optionRules.secureUrl(
  'use {base_url}/.well-known/kyb-jwks.json, an https: URL (http: only on 127.0.0.1, localhost or [::1])',
);

/**
 * What {@link createAttestationVerifier} returns: the verifier, and a check of its keys.
 *
 * @example
 * ```ts
 * const verify: AttestationVerifier = createAttestationVerifier({ issuer, audience, jwksUrl }, Date.now)
 * console.log(`${await verify.checkKeys()} keys`) // throws jwks_unavailable when the JWKS cannot be fetched
 * ```
 */
export interface AttestationVerifier {
  (token: string, envelope: EnvelopeIdentity, verifyOptions?: VerifyAttestationOptions): Promise<AttestationClaims>;
  /** How many keys the JWKS holds, fetched now (see `Receiver.checkAttestationKeys`). */
  checkKeys(): Promise<number>;
}

/**
 * Builds the attestation check of spec 5.5, in its exact order: `typ` before any signature work, `alg` pinned to
 * RS256, the key chosen by `kid` from the KYB JWKS (see {@link AttestationOptions} for caching and outages), then
 * `iss`, `aud`, `exp`, `iat` with leeway, then the binding to the envelope. Resolves with the verified claims,
 * throws a {@link KybWebhookError} otherwise.
 *
 * The platform crypto checks the RS256 signature and nothing else (node:crypto on Node, Web Crypto elsewhere);
 * every other rule is this module's, so both paths answer every token alike: all three segments canonical
 * base64url, header and claims strict UTF-8 JSON objects (a byte order mark is refused), `typ` compared ASCII
 * case-insensitively, RSA keys of at least 2048 bits and signatures of exactly the modulus length, finite numeric
 * dates. One test table runs every hostile token through both.
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
  telemetry?: ReceiverTelemetry,
): AttestationVerifier {
  const verifyDetailed = createDetailedAttestationVerifier(options, now, crypto, telemetry);
  const verify = async (
    token: string,
    envelope: EnvelopeIdentity,
    verifyOptions?: VerifyAttestationOptions,
  ): Promise<AttestationClaims> => (await verifyDetailed(token, envelope, verifyOptions)).claims;
  return Object.assign(verify, { checkKeys: verifyDetailed.checkKeys });
}

/** A verified attestation as the receiver uses it: the claims, and where they carry a release's answers. */
export interface VerifiedAttestation {
  claims: AttestationClaims;
  /** Found by the binding (`bindAttestation`); undefined when the claims carry no released answers. */
  answers: LocatedAnswerList | undefined;
}

/** The receiver's form of {@link AttestationVerifier}: it resolves with the {@link VerifiedAttestation}. */
export interface DetailedAttestationVerifier {
  (token: string, envelope: EnvelopeIdentity, verifyOptions?: VerifyAttestationOptions): Promise<VerifiedAttestation>;
  checkKeys(): Promise<number>;
}

/**
 * {@link createAttestationVerifier}'s check, resolving with the claims and the released answers the binding
 * located, so that a release's answers are searched once per delivery.
 *
 * @example
 * ```ts
 * const verify = createDetailedAttestationVerifier({ issuer, audience, jwksUrl }, Date.now)
 * const { claims, answers } = await verify(envelope.attestation, envelope)
 * ```
 */
export function createDetailedAttestationVerifier(
  options: AttestationOptions,
  now: () => number,
  crypto: PlatformCrypto = platformCrypto,
  telemetry?: ReceiverTelemetry,
): DetailedAttestationVerifier {
  const leeway = checkClaimOptions(options);
  if (typeof now !== 'function') {
    throw new KybWebhookError(
      'config_invalid',
      'The attestation clock must be a function in Unix milliseconds, e.g. Date.now.',
    );
  }
  const keys = createKeySource(options, now, telemetry);
  const headerOf = createHeaderDecoder(crypto);

  const verify = async (
    token: string,
    envelope: EnvelopeIdentity,
    verifyOptions?: VerifyAttestationOptions,
  ): Promise<VerifiedAttestation> => {
    // indexOf rather than split: a body of dots must not become a million-element array.
    const firstDot = token.indexOf('.');
    const secondDot = firstDot < 0 ? -1 : token.indexOf('.', firstDot + 1);
    if (secondDot < 0 || token.indexOf('.', secondDot + 1) >= 0)
      throw rejection('attestation_invalid', 'not a compact JWS');
    const header = headerOf(token.slice(0, firstDot));
    // 1. typ first: a token of another kind (a login ID token) is rejected before any key is fetched.
    if (!isAttestationTyp(header.typ))
      throw rejection('attestation_invalid_typ', `typ ${JSON.stringify(header.typ ?? null)}`);
    // 2. alg fixed by the verifier: "none", HS256 (key confusion) and everything else fail here.
    if (header.alg !== ALG) throw rejection('attestation_invalid', `alg ${JSON.stringify(header.alg ?? null)}`);
    if (header.crit !== undefined) throw rejection('attestation_invalid', 'crit header parameters are not supported');
    const kid = header.kid;
    if (typeof kid !== 'string') throw rejection('attestation_invalid', 'the header names no kid');

    const encodedPayload = token.slice(firstDot + 1, secondDot);
    // Strict decoders: native decoders are lenient in different ways, and a token must read the same everywhere.
    const claimBytes = crypto.decodeBase64url(encodedPayload);
    if (!claimBytes) throw rejection('attestation_invalid', 'claims are not canonical base64url');
    const signature = crypto.decodeBase64url(token.slice(secondDot + 1));
    if (!signature) throw rejection('attestation_invalid', 'signature is not canonical base64url');

    // 3. the key named by kid, then the signature.
    const key: VerificationKey = keys.peek(kid) ?? (await keys.get(kid));
    if (signature.length !== key.signatureBytes)
      throw rejection('attestation_invalid', 'signature length is not the key size');
    // Header and claims are canonical base64url, so the signing input is ASCII and every encoder gives the same bytes.
    const verified = crypto.verifyRs256(key.key, token.slice(0, secondDot), signature);
    if (!(verified === true || (verified !== false && (await verified))))
      throw rejection('attestation_invalid', 'bad signature');

    // 4. the registered claims.
    let claims: JWTPayload;
    try {
      claims = decodeJsonObject(crypto, claimBytes) as JWTPayload;
    } catch (cause) {
      throw rejection('attestation_invalid', 'claims are not a UTF-8 JSON object', cause);
    }
    checkRegisteredClaims(claims, options, Math.floor(readClock(now) / 1000), leeway, verifyOptions?.fetched === true);

    // 5. the envelope must carry the signed values, otherwise the delivery was relabelled.
    const answers = bindAttestation(claims as AttestationClaims, envelope, options.answersClaim);
    return { claims: claims as AttestationClaims, answers };
  };
  return Object.assign(verify, { checkKeys: () => keys.check() });
}

/** The options compared whole with a claim, and how to trim the environment variable each is usually read from. */
const CLAIM_OPTION_TRIMS = [
  ['issuer', 'process.env.KYB_ATTESTATION_ISSUER?.trim()'],
  ['audience', 'process.env.KYB_AUDIENCE?.trim()'],
] as const;

/**
 * The claim options checked at creation, for callers that skip createReceiver's option rules: the leeway (returned,
 * 30 by default), and an issuer and audience that can match (a newline read with them from a file never would).
 */
function checkClaimOptions(options: AttestationOptions): number {
  const leeway = options.leewaySeconds ?? 30;
  if (!(leeway >= 0 && leeway <= 60)) {
    throw new KybWebhookError('config_invalid', 'attestation.leewaySeconds must be between 0 and 60.');
  }
  if (!options.issuer)
    throw new KybWebhookError('config_invalid', 'attestation.issuer is required ({attestation_issuer}).');
  if (!options.audience) {
    throw new KybWebhookError(
      'config_invalid',
      "attestation.audience is required (the merchant's client domain UUID).",
    );
  }
  for (const [name, example] of CLAIM_OPTION_TRIMS) {
    const value: unknown = options[name];
    const problem = typeof value === 'string' ? strayWhitespaceProblem(value, example) : 'must be a string.';
    if (problem) throw new KybWebhookError('config_invalid', `attestation.${name} ${problem}`);
  }
  return leeway;
}

/**
 * Decodes JOSE headers, remembering them by their encoded text. The service signs every attestation with the same
 * few headers (one per kid), so at most MAX_REMEMBERED_HEADERS short ones are kept. The last one is compared first:
 * comparing its text costs less than hashing a new token's header text for the map.
 */
function createHeaderDecoder(crypto: PlatformCrypto): (encoded: string) => ProtectedHeaderParameters {
  const headers = new Map<string, ProtectedHeaderParameters>();
  let lastEncoded = '';
  let lastHeader: ProtectedHeaderParameters | undefined;
  return (encoded) => {
    if (encoded === lastEncoded && lastHeader) return lastHeader;
    let header = headers.get(encoded);
    if (!header) {
      header = decodeHeader(crypto, encoded);
      if (encoded.length > MAX_REMEMBERED_HEADER_LENGTH) return header;
      if (headers.size >= MAX_REMEMBERED_HEADERS) headers.delete(headers.keys().next().value as string);
      headers.set(encoded, header);
    }
    lastEncoded = encoded;
    lastHeader = header;
    return header;
  };
}

function decodeHeader(crypto: PlatformCrypto, encoded: string): ProtectedHeaderParameters {
  try {
    const bytes = crypto.decodeBase64url(encoded);
    if (!bytes) throw new TypeError('not canonical base64url');
    return Object.freeze(decodeJsonObject(crypto, bytes)) as ProtectedHeaderParameters;
  } catch (cause) {
    throw rejection('attestation_invalid', 'header is not base64url UTF-8 JSON', cause);
  }
}

/** A JOSE header or claims set, decoded from base64url: strict UTF-8 (BOM kept) of a JSON object. */
function decodeJsonObject(crypto: PlatformCrypto, bytes: Uint8Array): Record<string, unknown> {
  const value: unknown = JSON.parse(crypto.decodeUtf8(bytes));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * RFC 7515 §4.1.9: media types compare case-insensitively and "application/" may be omitted. ASCII case only:
 * `toLowerCase` would fold a KELVIN SIGN (U+212A) to "k" and accept a typ the service never sends.
 */
function isAttestationTyp(typ: unknown): boolean {
  if (typ === ATTESTATION_TYP) return true; // what the service sends: no regular expression for it
  if (typeof typ !== 'string') return false;
  const lower = typ.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
  return lower === ATTESTATION_TYP || lower === APPLICATION_TYP;
}

function createKeySource(
  options: AttestationOptions,
  now: () => number,
  telemetry: ReceiverTelemetry | undefined,
): KeySource {
  if (options.jwks && options.jwksUrl) {
    throw new KybWebhookError('config_invalid', 'Set attestation.jwksUrl or attestation.jwks, not both.');
  }
  if (options.jwks) return createInlineKeySource(options.jwks);
  if (!options.jwksUrl) {
    throw new KybWebhookError(
      'config_invalid',
      'attestation needs jwksUrl ({base_url}/.well-known/kyb-jwks.json) or jwks.',
    );
  }
  // The same rule as createReceiver's, for a verifier created on its own (the client, custom pipelines).
  validateArgument('createAttestationVerifier', 'attestation.jwksUrl', options.jwksUrl, jwksUrlRule);
  const url = new URL(options.jwksUrl);
  const cacheMaxAgeMs = duration(options, 'jwksCacheMaxAgeMs', 600_000);
  const maxStaleMs = duration(options, 'jwksMaxStaleMs', 12 * 3_600_000);
  if (maxStaleMs < cacheMaxAgeMs) {
    throw new KybWebhookError(
      'config_invalid',
      `attestation.jwksMaxStaleMs (${maxStaleMs}) must be at least attestation.jwksCacheMaxAgeMs (${cacheMaxAgeMs}): ` +
        'it is how long keys stay usable while refreshes fail, counted from the last successful fetch.',
    );
  }
  return createRemoteKeySource(
    {
      url,
      fetch: options.fetch,
      cooldownMs: duration(options, 'jwksCooldownMs', 30_000),
      cacheMaxAgeMs,
      maxStaleMs,
      timeoutMs: duration(options, 'jwksTimeoutMs', 5_000, 1, MAX_TIMER_MS),
      maxBytes: duration(options, 'jwksMaxBytes', 256 * 1024, 1),
      telemetry,
    },
    now,
  );
}

type NumericOption = 'jwksCooldownMs' | 'jwksCacheMaxAgeMs' | 'jwksMaxStaleMs' | 'jwksTimeoutMs' | 'jwksMaxBytes';

function duration(options: AttestationOptions, name: NumericOption, fallback: number, min = 0, max?: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < min || (max !== undefined && (value as number) > max)) {
    const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max} (the longest delay a timer keeps)`;
    throw new KybWebhookError(
      'config_invalid',
      `attestation.${name} must be a whole number ${range}; leave it out for ${fallback}.`,
    );
  }
  return value;
}
