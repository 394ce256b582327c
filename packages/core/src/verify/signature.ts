import { platformCrypto } from '#crypto';
import type { HmacSecret, PlatformCrypto } from './crypto/types.js';
import { KybWebhookError, rejection } from '../errors.js';
import { rememberingTest } from '../events/patterns.js';
import { describeValue } from '../option-words.js';
import { readClock } from './clock.js';

/** One HMAC secret version; `notAfter` ends it (the 24-hour overlap after a rotation, spec 5.7). */
export interface SecretVersion {
  /** The endpoint secret, as shown in the dashboard. */
  secret: string;
  /** Last moment this version is accepted: a `Date` or Unix milliseconds. */
  notAfter?: Date | number;
}

/** The spec's clock skew (5.7, 8): 5 minutes, the largest `toleranceSeconds` accepted. */
export const MAX_TOLERANCE_SECONDS = 300;
/**
 * The earliest `notAfter` accepted, in Unix milliseconds (March 1973). Below it a value is a current date in seconds
 * (about 1.8e9 today), never a real end: such a version would have ended in 1970.
 */
export const NOT_AFTER_MIN_MS = 1e11;

/** The HMAC keyring: secret version (the `kv` of the header) → secret. */
export type SecretKeyring = Record<string, string | SecretVersion>;

/** The parsed `Service-KYB-Signature` header. */
export interface ParsedSignatureHeader {
  timestamp: number;
  /** `t` exactly as sent: the MAC covers these characters, leading zeros included. */
  timestampText: string;
  mac: Uint8Array;
  version: string;
}

/** A secret version, the `kv` of the header: also what the keys of `secrets` must be (secrets-options.ts). */
export const SECRET_VERSION = /^[A-Za-z0-9._-]{1,64}$/;
/** SECRET_VERSION's test of a header's `kv`, which is the same on nearly every delivery. */
const isKeyVersion = rememberingTest(SECRET_VERSION);
const KEY = /^[a-z][a-z0-9]*$/;

/**
 * Parses `t=<unix seconds>,v1=<64 hex>,kv=<version>` strictly: each of t, v1 and kv exactly once, no spaces.
 * Other keys are ignored so that a future `v2` scheme does not break today's receivers.
 * It runs on every delivery, so it scans by index instead of splitting and matching regular expressions.
 *
 * @example
 * ```ts
 * parseSignatureHeader('t=1767225600,v1=' + 'ab'.repeat(32) + ',kv=3') // { timestamp: 1767225600, version: '3', … }
 * ```
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  let t: string | undefined;
  let v1: string | undefined;
  let kv: string | undefined;
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const equals = header.indexOf('=', start);
    if (equals === -1 || equals >= end || equals === start || equals === end - 1) {
      throw rejection('signature_malformed', 'a field is not key=value');
    }
    const key = header.slice(start, equals);
    const value = header.slice(equals + 1, end);
    if (key === 't' || key === 'v1' || key === 'kv') {
      if ((key === 't' ? t : key === 'v1' ? v1 : kv) !== undefined)
        throw rejection('signature_malformed', `field ${key} appears twice`);
      if (key === 't') t = value;
      else if (key === 'v1') v1 = value;
      else kv = value;
    } else if (!KEY.test(key) || /[=\s]/.test(value)) {
      throw rejection('signature_malformed', 'a field is not key=value');
    }
    start = end + 1;
  }
  if (t === undefined || !isDigits(t, 15)) throw rejection('signature_malformed', 't is missing or not an integer');
  // Decoded and checked by the platform: Node's native decoder costs the first deliveries of a process far less than a
  // JavaScript loop the JIT must first compile, and its checks less than a regular expression (bench/README.md).
  const mac = v1 !== undefined && v1.length === 64 ? platformCrypto.decodeHex(v1) : undefined;
  if (!mac) throw rejection('signature_malformed', 'v1 is missing or not 64 hex digits');
  if (kv === undefined || !isKeyVersion(kv)) throw rejection('signature_malformed', 'kv is missing or malformed');
  return { timestamp: Number(t), timestampText: t, mac, version: kv };
}

function isDigits(text: string, maxLength: number): boolean {
  if (text.length === 0 || text.length > maxLength) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

interface PreparedVersion {
  secret: Promise<HmacSecret>;
  /** The imported secret once `secret` settled, so the hot path does not wait a microtask for it. */
  ready: HmacSecret | undefined;
  notAfterMs: number;
}

/** Options of {@link createSignatureVerifier}. */
export interface SignatureVerifierOptions {
  secrets: SecretKeyring;
  /** Allowed clock skew in seconds, both ways: above 0 and at most 300 (spec: 5 minutes). */
  toleranceSeconds: number;
  /** Clock in Unix milliseconds; a reading that is not a finite number refuses the delivery with `internal_error`. */
  now: () => number;
  /** Crypto implementation; the platform's by default. Exposed so tests can run both. */
  crypto?: PlatformCrypto;
}

/** What a matching `Service-KYB-Signature` names. */
export interface VerifiedSignature {
  version: string;
  timestamp: number;
}

/**
 * Builds the `Service-KYB-Signature` check of spec 5.7: strict grammar, `kv` picks exactly one secret, timestamp
 * within the skew both ways against the receiver's own clock, HMAC-SHA256 over `"<t>." + the exact received bytes`,
 * compared in constant time. Resolves on success, throws a {@link KybWebhookError} with the reason otherwise.
 *
 * @example
 * ```ts
 * const verify = createSignatureVerifier({ secrets: { '3': secret }, toleranceSeconds: 300, now: Date.now })
 * await verify(request.headers.get('service-kyb-signature'), bodyBytes)
 * ```
 */
export function createSignatureVerifier(
  options: SignatureVerifierOptions,
): (header: string | undefined, body: Uint8Array) => Promise<VerifiedSignature> {
  const check = createSignatureCheck(options);
  return async (header, body) => check(header, body);
}

/**
 * The check behind {@link createSignatureVerifier}, for the receiver's hot path: it answers synchronously whenever
 * the secret is imported and the platform MAC is synchronous (node:crypto), and only returns a Promise otherwise
 * (Web Crypto), so a delivery does not pay a microtask for an answer that is already there. Failures throw, or
 * reject when the answer is a Promise.
 */
export function createSignatureCheck(
  options: SignatureVerifierOptions,
): (header: string | undefined, body: Uint8Array) => VerifiedSignature | Promise<VerifiedSignature> {
  const platform = options.crypto ?? platformCrypto;
  const toleranceMs = toleranceMsOf(options.toleranceSeconds);
  if (typeof options.now !== 'function') {
    throw new KybWebhookError('config_invalid', 'now must be a clock in Unix milliseconds, e.g. `now: Date.now`.');
  }
  const versions = prepareVersions(options.secrets, platform);
  refuseEndedKeyring(versions, options.now);

  const verifyMac = (
    secret: HmacSecret,
    parsed: ParsedSignatureHeader,
    body: Uint8Array,
  ): VerifiedSignature | Promise<VerifiedSignature> => {
    const matched = platform.verifyHmac(secret, `${parsed.timestampText}.`, body, parsed.mac);
    if (typeof matched !== 'boolean') return matched.then((ok) => verdict(ok, parsed));
    return verdict(matched, parsed);
  };

  return (header, body) => {
    const trimmed = header?.trim();
    if (!trimmed) throw rejection('signature_missing');
    const parsed = parseSignatureHeader(trimmed);
    const version = versions.get(parsed.version);
    if (!version) throw rejection('signature_unknown_version', `kv=${parsed.version} is not configured`);
    const now = readClock(options.now);
    // Written as "not within" so that a NaN anywhere refuses instead of passing.
    if (!(now <= version.notAfterMs)) throw rejection('signature_version_expired', `kv=${parsed.version} ended`);
    const skew = now - parsed.timestamp * 1000;
    if (!(Math.abs(skew) <= toleranceMs)) {
      if (skew > 0) throw rejection('signature_expired', `t is ${Math.round(skew / 1000)} s old`);
      throw rejection('signature_future', `t is ${Math.round(-skew / 1000)} s ahead`);
    }
    if (version.ready) return verifyMac(version.ready, parsed, body);
    return version.secret.then((secret) => verifyMac(secret, parsed, body));
  };
}

/**
 * What is wrong with a `toleranceSeconds`, or undefined. Shared by createReceiver's option rule and
 * {@link createSignatureCheck}, so both refuse alike: a missing or non-finite tolerance would turn the skew check off,
 * and one above the spec's 5 minutes (5.7, 8) widens the window in which a captured delivery can be replayed.
 *
 * @example
 * ```ts
 * toleranceProblem(600) // 'must be at most 300 seconds: the spec allows 5 minutes of clock skew …'
 * ```
 */
export function toleranceProblem(value: unknown): string | undefined {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
    return `must be a positive finite number of seconds, got ${describeValue(value)}.`;
  return value > MAX_TOLERANCE_SECONDS
    ? `must be at most ${MAX_TOLERANCE_SECONDS} seconds: the spec allows 5 minutes of clock skew, and more widens ` +
        `the window for replayed deliveries; use ${MAX_TOLERANCE_SECONDS}.`
    : undefined;
}

function toleranceMsOf(toleranceSeconds: unknown): number {
  const problem = toleranceProblem(toleranceSeconds);
  if (problem !== undefined) throw new KybWebhookError('config_invalid', `toleranceSeconds ${problem}`);
  return (toleranceSeconds as number) * 1000;
}

/** The keyring, each secret's import started and each end checked: config_invalid names the version at fault. */
function prepareVersions(secrets: SecretKeyring, platform: PlatformCrypto): Map<string, PreparedVersion> {
  const versions = new Map<string, PreparedVersion>();
  for (const [version, entry] of Object.entries(secrets)) {
    const { secret, notAfter } = typeof entry === 'string' ? { secret: entry, notAfter: undefined } : entry;
    if (!SECRET_VERSION.test(version)) {
      throw new KybWebhookError(
        'config_invalid',
        `Secret version "${version}" must match ${SECRET_VERSION} (it is the kv of the header).`,
      );
    }
    if (typeof secret !== 'string' || secret.length === 0) {
      throw new KybWebhookError(
        'config_invalid',
        `The secret of version "${version}" is empty; set it from the dashboard.`,
      );
    }
    const prepared: PreparedVersion = {
      secret: platform.importHmacSecret(secret),
      ready: undefined,
      notAfterMs: endOf(version, notAfter),
    };
    // A failed import is surfaced on first use; the catch only avoids an unhandled rejection at start-up.
    prepared.secret.then(
      (imported) => (prepared.ready = imported),
      () => {},
    );
    versions.set(version, prepared);
  }
  return versions;
}

/** A version's `notAfter` in Unix milliseconds (Infinity when it has none), or config_invalid. */
function endOf(version: string, notAfter: unknown): number {
  // An end that does not parse ('24h', NaN, an Invalid Date) would otherwise keep the old secret valid forever.
  const notAfterMs =
    notAfter === undefined
      ? Number.POSITIVE_INFINITY
      : notAfter instanceof Date || typeof notAfter === 'number'
        ? new Date(notAfter).getTime()
        : Number.NaN;
  if (Number.isNaN(notAfterMs)) {
    throw new KybWebhookError(
      'config_invalid',
      `The notAfter of secret version "${version}" must be a valid Date or Unix milliseconds.`,
    );
  }
  // Read as milliseconds, seconds (the spec's unit for t) end the version in 1970 and refuse all its deliveries.
  if (notAfterMs < NOT_AFTER_MIN_MS) {
    throw new KybWebhookError(
      'config_invalid',
      `The notAfter of secret version "${version}" is Unix milliseconds or a Date; this looks like seconds: multiply by 1000.`,
    );
  }
  return notAfterMs;
}

/**
 * A keyring whose every version has already ended would answer every delivery `signature_version_expired`, and the
 * service would retry for hours and then quarantine the endpoint. The clock is read only when every version has an
 * end; a clock that answers no number is left to the per-delivery check (readClock), which refuses it.
 */
function refuseEndedKeyring(versions: ReadonlyMap<string, PreparedVersion>, now: () => number): void {
  if (versions.size === 0) return;
  let lastEndMs = Number.NEGATIVE_INFINITY;
  for (const version of versions.values()) lastEndMs = Math.max(lastEndMs, version.notAfterMs);
  if (lastEndMs === Number.POSITIVE_INFINITY) return;
  const nowMs = now();
  if (Number.isFinite(nowMs) && nowMs > lastEndMs) {
    throw new KybWebhookError(
      'config_invalid',
      'Every secret version has already ended (each notAfter is past), so no delivery could be verified: add the ' +
        'current secret from the dashboard, without notAfter.',
    );
  }
}

function verdict(matched: boolean, parsed: ParsedSignatureHeader): VerifiedSignature {
  if (!matched) throw rejection('signature_mismatch', `kv=${parsed.version}`);
  return { version: parsed.version, timestamp: parsed.timestamp };
}
