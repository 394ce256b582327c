/**
 * The hand-written baseline: what a careful receiver written without our library does once the framework has
 * handed it the raw body. Every framework's `handwritten` endpoints call it, so they differ only in the framework.
 */
import { createHmac, createPublicKey, timingSafeEqual, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { benchNow } from '../clock.js';

const TOLERANCE_S = 300;

/** HMAC check: t within the skew, kv picks the secret, HMAC-SHA256 over "<t>." + bytes, constant-time compare. */
export function createHmacCheck(
  secrets: Record<string, string>,
): (header: string | undefined, body: Uint8Array) => boolean {
  return (header, body) => {
    if (header === undefined) return false;
    let t: string | undefined;
    let v1: string | undefined;
    let kv: string | undefined;
    for (const field of header.split(',')) {
      const eq = field.indexOf('=');
      const key = field.slice(0, eq);
      if (key === 't') t = field.slice(eq + 1);
      else if (key === 'v1') v1 = field.slice(eq + 1);
      else if (key === 'kv') kv = field.slice(eq + 1);
    }
    const secret = kv === undefined ? undefined : secrets[kv];
    if (t === undefined || v1 === undefined || secret === undefined) return false;
    if (Math.abs(benchNow() / 1000 - Number(t)) > TOLERANCE_S) return false;
    const expected = Buffer.from(v1, 'hex');
    const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  };
}

/** Most event ids kept, as our memory store's default cap; the oldest go first, a batch at a time like there. */
const MAX_SEEN = 100_000;
const EVICTION_BATCH = MAX_SEEN / 100;

/**
 * A Map of the event ids seen, bounded like a careful receiver bounds it. With `keyPerRequest`, every request is
 * recorded under its own key (`<event_id>#<n>`), as `perRequestKeyStore` does for our adapter: the attested pool is
 * cycled, and both sides should do the work of a first delivery on every request.
 */
export function createSeenEvents(keyPerRequest: boolean): (eventId: string) => boolean {
  const seen = new Map<string, number>();
  let sequence = 0;
  return (eventId) => {
    const key = keyPerRequest ? `${eventId}#${++sequence}` : eventId;
    if (seen.has(key)) return false;
    seen.set(key, benchNow());
    if (seen.size > MAX_SEEN) {
      let excess = seen.size - MAX_SEEN + EVICTION_BATCH;
      for (const old of seen.keys()) {
        if (excess-- <= 0) break;
        seen.delete(old);
      }
    }
    return true;
  };
}

/** The JWKS's public keys by `kid`, imported once. */
function publicKeysByKid(jwks: { keys: readonly object[] }): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const jwk of jwks.keys as (JsonWebKey & { kid?: string })[]) {
    if (typeof jwk.kid === 'string') keys.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }));
  }
  return keys;
}

/**
 * One raw RS256 check of an attestation token, as a hand-written receiver would add it: the key named by the header's
 * `kid` (imported once from the JWKS), `crypto.verify` of the signing input, nothing else (no typ/alg rules, no
 * claims, no binding). The HTTP section uses it to measure what a raw verify costs inside a server under load.
 */
export function createTokenCheck(jwks: { keys: readonly object[] }): (token: unknown) => boolean {
  const keys = publicKeysByKid(jwks);
  return (token) => {
    if (typeof token !== 'string') return false;
    const firstDot = token.indexOf('.');
    const lastDot = token.lastIndexOf('.');
    if (firstDot < 0 || lastDot === firstDot) return false;
    let kid: unknown;
    try {
      kid = (JSON.parse(Buffer.from(token.slice(0, firstDot), 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    } catch {
      return false;
    }
    const key = typeof kid === 'string' ? keys.get(kid) : undefined;
    if (key === undefined) return false;
    return verify(
      'RSA-SHA256',
      Buffer.from(token.slice(0, lastDot), 'latin1'),
      key,
      Buffer.from(token.slice(lastDot + 1), 'base64url'),
    );
  };
}

/** The status a manual endpoint answers. */
export type ManualStatus = 200 | 400 | 401;

/**
 * The hand-written receiver: HMAC, JSON.parse of the verified bytes, dedupe on event_id, 200 (a duplicate is a
 * 200 too, without handling it again). With `verifyTokensOf` (a JWKS) it also checks the attestation's RS256
 * signature with one raw `crypto.verify` ({@link createTokenCheck}), and answers 401 when that fails.
 *
 * @example
 * ```ts
 * const answer = createHandwrittenReceiver({ '1': secret }, { keyPerRequest: false })
 * answer(req.headers['service-kyb-signature'], rawBody) // 200 | 400 | 401
 * ```
 */
export function createHandwrittenReceiver(
  secrets: Record<string, string>,
  options: {
    keyPerRequest: boolean;
    verifyTokensOf?: { keys: readonly object[] };
    /** A check of the parsed envelope after the HMAC (the instruction-count bench passes createAttestationCheck). */
    checkEnvelope?: (envelope: Record<string, unknown>) => boolean;
  },
): (header: string | undefined, body: Buffer) => ManualStatus {
  const checkHmac = createHmacCheck(secrets);
  const firstTime = createSeenEvents(options.keyPerRequest);
  const checkToken = options.verifyTokensOf ? createTokenCheck(options.verifyTokensOf) : undefined;
  const { checkEnvelope } = options;
  return (header, body) => {
    if (!checkHmac(header, body)) return 401;
    let event: unknown;
    try {
      event = JSON.parse(body.toString('utf8'));
    } catch {
      return 400;
    }
    const eventId = (event as { event_id?: unknown } | null)?.event_id;
    if (typeof eventId !== 'string') return 400;
    if (checkToken && !checkToken((event as { attestation?: unknown }).attestation)) return 401;
    if (checkEnvelope && !checkEnvelope(event as Record<string, unknown>)) return 401;
    firstTime(eventId);
    return 200;
  };
}

/** Seconds of clock skew allowed on `exp` and `iat`, as our receiver's default. */
const CLAIM_LEEWAY_S = 30;

/**
 * Everything spec 5.5 asks of an attestation, written by hand the short way: `typ` before the signature, RS256 fixed,
 * the key named by `kid` (imported once), one `crypto.verify`, then `iss`, `aud`, `exp` and `iat` with a leeway, and
 * the envelope's event_id, stream_id and seq equal to the signed copies. The instruction-count section compares our
 * attested receiver with the hand-written receiver plus this check.
 *
 * @example
 * ```ts
 * const check = createAttestationCheck(jwks, { issuer, audience, now: () => Date.now() })
 * check(envelope) // true when the attestation holds and binds the envelope
 * ```
 */
export function createAttestationCheck(
  jwks: { keys: readonly object[] },
  expected: { issuer: string; audience: string; now: () => number },
): (envelope: Record<string, unknown>) => boolean {
  const keys = publicKeysByKid(jwks);
  const decode = (part: string): Record<string, unknown> | undefined => {
    try {
      const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
      return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  return (envelope) => {
    const token = envelope['attestation'];
    if (typeof token !== 'string') return false;
    const [headerPart, payloadPart, signature, extra] = token.split('.');
    if (headerPart === undefined || payloadPart === undefined || signature === undefined || extra !== undefined)
      return false;
    const header = decode(headerPart);
    if (header?.['typ'] !== 'kyb-attestation+jwt' || header['alg'] !== 'RS256') return false;
    const key = typeof header['kid'] === 'string' ? keys.get(header['kid']) : undefined;
    if (key === undefined) return false;
    const signed = Buffer.from(`${headerPart}.${payloadPart}`, 'latin1');
    if (!verify('RSA-SHA256', signed, key, Buffer.from(signature, 'base64url'))) return false;
    const claims = decode(payloadPart);
    const now = expected.now() / 1000;
    return (
      claims !== undefined &&
      claims['iss'] === expected.issuer &&
      claims['aud'] === expected.audience &&
      typeof claims['exp'] === 'number' &&
      claims['exp'] + CLAIM_LEEWAY_S > now &&
      typeof claims['iat'] === 'number' &&
      claims['iat'] - CLAIM_LEEWAY_S <= now &&
      claims['event_id'] === envelope['event_id'] &&
      claims['stream_id'] === envelope['stream_id'] &&
      claims['seq'] === envelope['seq']
    );
  };
}
