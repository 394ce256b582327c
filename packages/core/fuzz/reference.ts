/*
 * The fuzzer's independent judge: what the spec (2.3, 2.4, 5.5, 5.7, 8) and issue 11 allow a receiver to
 * acknowledge, written again from the spec with node:crypto and JSON.parse. It imports nothing from the core on
 * purpose: a rule the core gets wrong must not be copied into the check that is meant to catch it.
 *
 * Where the spec leaves a choice open, this judge takes the permissive side (a UTF-8 BOM before JSON text, `aud` as
 * an array that contains the audience, extra fields in the signature header, upper-case hex in v1), so that the
 * core may be stricter than the judge but never looser. A failure of the invariant "acknowledged ⇒ accepted here"
 * is therefore always a delivery that no reading of the spec allows.
 */
import { createHmac, createPublicKey, verify, type KeyObject } from 'node:crypto';

/** Request headers in the two shapes adapters hand to the core. */
export type HeaderContainer = Headers | Record<string, string | string[] | undefined>;

/** A JSON Web Key as found in a JWKS (only the members this judge reads are named). */
export interface ReferenceJwk {
  kty?: unknown;
  kid?: unknown;
  alg?: unknown;
  use?: unknown;
  [member: string]: unknown;
}

/** What a receiver under test is configured with, restated for the judge. */
export interface ReferenceConfig {
  /** The receiver's clock in Unix milliseconds. */
  nowMs: number;
  /** HMAC secrets by kv; absent when the receiver has none (attestation-only mode). */
  secrets?: Record<string, { secret: string; notAfterMs?: number }>;
  /** Signature timestamp skew, both ways, in seconds (spec 8: 5 minutes). */
  toleranceSeconds: number;
  /** The attestation check; absent in HMAC-only mode. */
  attestation?: { issuer: string; audience: string; jwks: { keys: ReferenceJwk[] }; leewaySeconds: number };
}

/** The judge's answer for one delivery. */
export type Verdict =
  | { ok: true; authenticatedBy: 'hmac' | 'attestation' | 'hmac+attestation'; envelope: Record<string, unknown> }
  | { ok: false; reason: string };

/** Spec 2.3: these two types are attested and must carry an attestation. */
export const REFERENCE_ATTESTED_TYPES: ReadonlySet<string> = new Set([
  'kyb.data_request.released',
  'kyb.business.wallet_address_changed',
]);
/** Spec 6: the five known types the spec marks unattested; an attestation is never accepted on them (issue 11 §2). */
export const REFERENCE_UNATTESTED_TYPES: ReadonlySet<string> = new Set([
  'kyb.data_request.pending_approval',
  'kyb.data_request.refused',
  'kyb.signature_request.pending_approval',
  'kyb.signature_request.signed',
  'kyb.signature_request.refused',
]);
const RELEASED = 'kyb.data_request.released';
const TYP = 'kyb-attestation+jwt';
const BOM = '\uFEFF';
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
const API_VERSION = /^\d{4}-\d{2}-\d{2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The header value(s) an HTTP stack would see for `name` (lower case): every value of every key equal to it
 * ignoring ASCII case, arrays flattened. A Web `Headers` already combines repeated fields into one value.
 *
 * @example
 * ```ts
 * referenceHeaderValues({ 'Service-KYB-Signature': ['a', 'b'] }, 'service-kyb-signature') // ['a', 'b']
 * ```
 */
export function referenceHeaderValues(headers: HeaderContainer, name: string): string[] {
  if (headers instanceof Headers) {
    const value = headers.get(name);
    return value === null ? [] : [value];
  }
  const values: string[] = [];
  for (const key of Object.keys(headers)) {
    // Unicode lower-casing as well as ASCII: a key only Unicode folding matches (KELVIN SIGN for k) is no HTTP field
    // name, but the value under it is still checked in full, so counting it cannot make a forgery pass here.
    if (asciiLower(key) !== name && key.toLowerCase() !== name) continue;
    const value = headers[key];
    if (typeof value === 'string') values.push(value);
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') values.push(item);
  }
  return values;
}

/**
 * Spec 5.7: some presented Service-KYB-Signature value is `t=<unix>,v1=<hex>,kv=<version>` with each of t, v1 and
 * kv exactly once, kv a configured version still inside its overlap, t within the skew of the receiver's clock,
 * and v1 the HMAC-SHA256 of `<t>.` followed by the exact body bytes under that version's secret.
 *
 * @example
 * ```ts
 * referenceHmac(config, { 'service-kyb-signature': header }, body) // { ok: true, version: '3' }
 * ```
 */
export function referenceHmac(
  config: ReferenceConfig,
  headers: HeaderContainer,
  body: Uint8Array,
): { ok: true; version: string } | { ok: false; reason: string } {
  const secrets = config.secrets;
  if (!secrets) return { ok: false, reason: 'no secrets configured' };
  const values = referenceHeaderValues(headers, 'service-kyb-signature');
  if (values.length === 0) return { ok: false, reason: 'signature header missing' };
  let reason = 'no value verifies';
  for (const value of values) {
    const verdict = checkOneSignature(config, secrets, value.trim(), body);
    if (verdict.ok) return verdict;
    reason = verdict.reason;
  }
  return { ok: false, reason };
}

function checkOneSignature(
  config: ReferenceConfig,
  secrets: NonNullable<ReferenceConfig['secrets']>,
  header: string,
  body: Uint8Array,
): { ok: true; version: string } | { ok: false; reason: string } {
  const fields = new Map<string, string[]>();
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue; // not a field this judge needs; the core may reject it, which is stricter
    const key = part.slice(0, equals);
    const list = fields.get(key) ?? [];
    list.push(part.slice(equals + 1));
    fields.set(key, list);
  }
  const [t, v1, kv] = (['t', 'v1', 'kv'] as const).map((key) => fields.get(key));
  if (t?.length !== 1 || v1?.length !== 1 || kv?.length !== 1)
    return { ok: false, reason: 't, v1 and kv must each appear once' };
  const [tText, mac, version] = [t[0]!, v1[0]!, kv[0]!];
  if (!/^[0-9]+$/.test(tText)) return { ok: false, reason: 't is not unix seconds' };
  if (!Object.hasOwn(secrets, version)) return { ok: false, reason: 'kv unknown' };
  const entry = secrets[version]!;
  if (entry.notAfterMs !== undefined && config.nowMs > entry.notAfterMs)
    return { ok: false, reason: 'kv past its overlap' };
  const skewMs = Math.abs(config.nowMs - Number(tText) * 1000);
  if (!(skewMs <= config.toleranceSeconds * 1000)) return { ok: false, reason: 't outside the skew' };
  const expected = createHmac('sha256', entry.secret).update(`${tText}.`, 'latin1').update(body).digest('hex');
  if (mac.toLowerCase() !== expected) return { ok: false, reason: 'MAC differs' };
  return { ok: true, version };
}

/**
 * The body as JSON text: strict UTF-8 (one leading BOM tolerated, RFC 8259 §8.1 lets parsers ignore it), parsed
 * with JSON.parse.
 *
 * @example
 * ```ts
 * referenceParseJson(new TextEncoder().encode('{"a":1}')) // { ok: true, value: { a: 1 } }
 * ```
 */
export function referenceParseJson(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    let text = strictUtf8.decode(bytes);
    if (text.startsWith(BOM)) text = text.slice(1);
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Spec 2.3 (and 8 for the event_id length): the envelope's shape, or the reason it is not one.
 *
 * @example
 * ```ts
 * referenceEnvelopeProblem({ event: 'kyb.data_request.refused', event_id: '01K…', stream_id: 'dr_1', seq: 0, … }) // undefined
 * ```
 */
export function referenceEnvelopeProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'body is not a JSON object';
  const { event, event_id, stream_id, seq, timestamp, api_version, data } = value;
  if (typeof event !== 'string' || event.length === 0) return 'event';
  if (typeof event_id !== 'string' || !ULID.test(event_id)) return 'event_id';
  if (typeof stream_id !== 'string' || stream_id.length === 0) return 'stream_id';
  // A seq beyond 2^53 cannot be compared exactly with its signed copy, so it is not an integer worth trusting.
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return 'seq';
  if (typeof timestamp !== 'number' || !Number.isInteger(timestamp)) return 'timestamp';
  if (typeof api_version !== 'string' || !API_VERSION.test(api_version)) return 'api_version';
  if (!isPlainObject(data)) return 'data';
  if (Object.hasOwn(value, 'attestation') && typeof value['attestation'] !== 'string') return 'attestation';
  return undefined;
}

/**
 * Spec 5.5 and issue 11 §2–3, in full: a strict compact JWS (three non-empty canonical base64url segments, no
 * padding, no other character), a JSON object header with typ `kyb-attestation+jwt` (ASCII case-insensitive, optional
 * `application/`), alg exactly RS256, no crit, kid naming an RSA key of at least 2048 bits in the JWKS (use `sig`
 * and alg RS256 where the key says), the RS256 signature valid, then iss, aud, finite numeric exp / iat (/ nbf)
 * with the leeway, event_id / stream_id / seq equal to the envelope's and request_id equal to its stream_id, and the
 * type bound as far as the claims can bind it. Returns undefined when the token is acceptable, else the reason.
 *
 * @example
 * ```ts
 * referenceAttestationProblem(config.attestation!, config.nowMs, envelope.attestation, envelope) // undefined
 * ```
 */
export function referenceAttestationProblem(
  attestation: NonNullable<ReferenceConfig['attestation']>,
  nowMs: number,
  token: string,
  envelope: Record<string, unknown>,
): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return 'not three segments';
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  for (const segment of parts) if (!isStrictBase64url(segment)) return 'segment not strict base64url';
  const header = decodeSegmentJson(encodedHeader);
  if (!isPlainObject(header)) return 'header not a JSON object';
  const typProblem = referenceTypProblem(header);
  if (typProblem) return typProblem;
  if (header['alg'] !== 'RS256') return 'alg';
  if (Object.hasOwn(header, 'crit')) return 'crit';
  const key = findKey(attestation.jwks, header['kid']);
  if (!key) return 'no usable key for kid';
  const signature = Buffer.from(encodedSignature, 'base64url');
  if (!verify('RSA-SHA256', Buffer.from(`${encodedHeader}.${encodedPayload}`, 'latin1'), key, signature))
    return 'signature';

  const claims = decodeSegmentJson(encodedPayload);
  if (!isPlainObject(claims)) return 'claims not a JSON object';
  const now = Math.floor(nowMs / 1000);
  const leeway = attestation.leewaySeconds;
  if (claims['iss'] !== attestation.issuer) return 'iss';
  const aud = claims['aud'];
  if (!(aud === attestation.audience || (Array.isArray(aud) && aud.includes(attestation.audience)))) return 'aud';
  const { exp, iat, nbf } = claims;
  if (!isFiniteNumber(exp) || !(exp > now - leeway)) return 'exp';
  if (!isFiniteNumber(iat) || !(iat <= now + leeway)) return 'iat';
  if (Object.hasOwn(claims, 'nbf') && (!isFiniteNumber(nbf) || !(nbf <= now + leeway))) return 'nbf';

  if (claims['event_id'] !== envelope['event_id']) return 'event_id relabelled';
  if (claims['stream_id'] !== envelope['stream_id']) return 'stream_id relabelled';
  if (claims['seq'] !== envelope['seq']) return 'seq relabelled';
  if (claims['request_id'] !== envelope['stream_id']) return 'request_id relabelled';
  const type = envelope['event'] as string;
  if (REFERENCE_UNATTESTED_TYPES.has(type)) return 'attestation on a type the spec marks unattested';
  for (const typeClaim of ['event', 'event_type']) {
    if (Object.hasOwn(claims, typeClaim) && claims[typeClaim] !== type) return `signed ${typeClaim} differs`;
  }
  if (Array.isArray(claims['answers']) && type !== RELEASED) return 'released payload under another type';
  const data = envelope['data'] as Record<string, unknown>;
  for (const field of Object.keys(data)) {
    if (Object.hasOwn(claims, field) && !sameJson(data[field], claims[field]))
      return `data.${field} differs from its signed copy`;
  }
  return undefined;
}

/**
 * Spec 5.5.1: the decoded JOSE header's typ, compared ASCII case-insensitively (never with Unicode case folding),
 * with an optional `application/` prefix (RFC 7515 §4.1.9). Undefined when it is right.
 *
 * @example
 * ```ts
 * referenceTypProblem({ typ: 'Application/KYB-Attestation+JWT' }) // undefined
 * referenceTypProblem({ typ: '\u212Ayb-attestation+jwt' })       // 'typ' (KELVIN SIGN is not k)
 * ```
 */
export function referenceTypProblem(header: Record<string, unknown>): string | undefined {
  const typ = header['typ'];
  if (typeof typ !== 'string') return 'typ';
  const lower = asciiLower(typ);
  return lower === TYP || lower === `application/${TYP}` ? undefined : 'typ';
}

/**
 * The whole judgement for one delivery to a receiver configured as `config`: what authenticates it and whether
 * every check that applies passes. In attestation-only mode a delivery without an attestation cannot be
 * authenticated at all, so it is never `ok` (the receiver may only answer it with `code: 'unauthenticated'`).
 *
 * @example
 * ```ts
 * const verdict = referenceVerdict(config, headers, body)
 * if (result.status < 300 && result.code !== 'unauthenticated') expect(verdict).toMatchObject({ ok: true })
 * ```
 */
export function referenceVerdict(config: ReferenceConfig, headers: HeaderContainer, body: Uint8Array): Verdict {
  let hmac = false;
  if (config.secrets) {
    const checked = referenceHmac(config, headers, body);
    if (!checked.ok) return { ok: false, reason: `hmac: ${checked.reason}` };
    hmac = true;
  }
  const parsed = referenceParseJson(body);
  if (!parsed.ok) return { ok: false, reason: 'body is not UTF-8 JSON' };
  const problem = referenceEnvelopeProblem(parsed.value);
  if (problem) return { ok: false, reason: `envelope: ${problem}` };
  const envelope = parsed.value as Record<string, unknown>;
  const token = envelope['attestation'];
  if (typeof token === 'string') {
    if (!config.attestation) return { ok: false, reason: 'attestation carried but not configured' };
    const attestationProblem = referenceAttestationProblem(config.attestation, config.nowMs, token, envelope);
    if (attestationProblem) return { ok: false, reason: `attestation: ${attestationProblem}` };
    return { ok: true, authenticatedBy: hmac ? 'hmac+attestation' : 'attestation', envelope };
  }
  if (REFERENCE_ATTESTED_TYPES.has(envelope['event'] as string))
    return { ok: false, reason: 'attested type without attestation' };
  if (!hmac) return { ok: false, reason: 'unauthenticated (no attestation, no secrets)' };
  return { ok: true, authenticatedBy: 'hmac', envelope };
}

function isStrictBase64url(segment: string): boolean {
  // Non-empty, only the URL-safe alphabet, no padding, and the one canonical encoding of its bytes (zero spare bits
  // in the last character), so that a token has a single spelling (RFC 4648 §3.5).
  return (
    BASE64URL.test(segment) &&
    segment.length % 4 !== 1 &&
    Buffer.from(segment, 'base64url').toString('base64url') === segment
  );
}

function decodeSegmentJson(segment: string): unknown {
  try {
    let text = strictUtf8.decode(Buffer.from(segment, 'base64url'));
    if (text.startsWith(BOM)) text = text.slice(1);
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const keyCache = new WeakMap<ReferenceJwk, KeyObject | null>();

function findKey(jwks: { keys: ReferenceJwk[] }, kid: unknown): KeyObject | undefined {
  if (typeof kid !== 'string') return undefined;
  const matches = jwks.keys.filter((jwk) => jwk.kid === kid);
  if (matches.length !== 1) return undefined;
  const jwk = matches[0]!;
  if (jwk.kty !== 'RSA') return undefined;
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  if (jwk.alg !== undefined && jwk.alg !== 'RS256') return undefined;
  let key = keyCache.get(jwk);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch {
      key = null;
    }
    keyCache.set(jwk, key);
  }
  if (!key) return undefined;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  return bits >= 2048 ? key : undefined;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 32));
}

/** Equality of two JSON.parse results, iteratively (hostile bodies nest deep enough to overflow a recursive walk). */
function sameJson(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (!isObjectLike(x) || !isObjectLike(y) || Array.isArray(x) !== Array.isArray(y)) return false;
    const xKeys = Object.keys(x);
    if (xKeys.length !== Object.keys(y).length) return false;
    for (const key of xKeys) {
      if (!Object.hasOwn(y, key)) return false;
      stack.push([(x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key]]);
    }
  }
  return true;
}

function isObjectLike(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
