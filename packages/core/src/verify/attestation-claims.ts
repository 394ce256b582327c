/*
 * The registered claims of an attestation (RFC 7519 §4.1, spec 5.5): present, from the configured issuer to the
 * configured audience, dates that are finite numbers and hold with the leeway. The binding of the claims to the
 * envelope is attestation-binding.ts; the token's decoding and signature, attestation.ts.
 */
import type { JWTPayload } from 'jose';
import { rejection } from '../errors.js';

const REQUIRED_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'event_id', 'stream_id', 'seq', 'request_id'] as const;

function isNumericDate(value: unknown): value is number {
  // JSON.parse turns 1e400 into Infinity: a date that never comes is not a date.
  return Number.isFinite(value);
}

/**
 * The registered-claim rules (RFC 7519 §4.1) with the leeway, applied alike on every path: throws
 * `attestation_invalid` naming the claim that fails. `now` is in Unix seconds; `fetched` (a token the caller pulled
 * from the KYB API itself: `VerifyAttestationOptions.fetched` says why) lifts the `exp` check and no other.
 *
 * @example
 * ```ts
 * checkRegisteredClaims(claims, { issuer, audience }, Math.floor(Date.now() / 1000), 30, false)
 * ```
 */
export function checkRegisteredClaims(
  claims: JWTPayload,
  options: { issuer: string; audience: string },
  now: number,
  leeway: number,
  fetched: boolean,
): void {
  // Index loops here and in bindAttestation: for-of takes the array iterator, a call per item until optimized.
  for (let i = 0; i < REQUIRED_CLAIMS.length; i++) {
    const claim = REQUIRED_CLAIMS[i]!;
    if (!Object.hasOwn(claims, claim)) throw rejection('attestation_invalid', `missing required "${claim}" claim`);
  }
  // Expected against received, so an operator sees a misconfigured issuer or audience at once: claim values are
  // neither secret nor the token, and a log entry cuts and escapes them.
  if (claims.iss !== options.issuer) {
    throw rejection(
      'attestation_invalid',
      `unexpected "iss" claim value ${describeClaim(claims.iss)}, expected ${JSON.stringify(options.issuer)} (attestation.issuer)`,
    );
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(options.audience)) {
    throw rejection(
      'attestation_invalid',
      `unexpected "aud" claim value ${describeClaim(claims.aud)}, expected ${JSON.stringify(options.audience)} (attestation.audience)`,
    );
  }
  // Three named reads, not a loop over the names: a keyed read by a varying name goes the slow way in V8.
  checkDateClaim('exp', claims.exp);
  checkDateClaim('iat', claims.iat);
  checkDateClaim('nbf', claims.nbf);
  // Each written as "not within", so that a NaN (a clock that answered no number) refuses instead of passing.
  if (claims.nbf !== undefined && !((claims.nbf as number) <= now + leeway)) {
    throw rejection(
      'attestation_invalid',
      `"nbf" claim timestamp check failed: not before ${isoOf(claims.nbf as number)}, now ${isoOf(now)} (leeway ${leeway} s)`,
    );
  }
  if (!fetched && !((claims.exp as number) > now - leeway)) {
    throw rejection(
      'attestation_invalid',
      `"exp" claim timestamp check failed: expired ${isoOf(claims.exp as number)}, now ${isoOf(now)} (leeway ${leeway} s)`,
    );
  }
  // A token issued in the future is refused too (jose checks iat only against maxTokenAge).
  if (!((claims.iat as number) <= now + leeway)) throw rejection('attestation_invalid', '"iat" claim is in the future');
}

/** A date claim, when present, must be a {@link isNumericDate}. */
function checkDateClaim(claim: 'exp' | 'iat' | 'nbf', value: unknown): void {
  if (value !== undefined && !isNumericDate(value))
    throw rejection('attestation_invalid', `"${claim}" claim must be a finite number`);
}

/** A claim value for a log detail: JSON, cut short (an array of audiences shows its first few). */
function describeClaim(value: unknown): string {
  if (value === undefined) return '(absent)';
  const shown = Array.isArray(value) && value.length > 5 ? [...value.slice(0, 5), `… ${value.length - 5} more`] : value;
  const text = JSON.stringify(shown) ?? String(shown);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Unix seconds as ISO 8601, or the number itself when it is no date. */
function isoOf(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString();
}
