import { platformCrypto } from '#crypto';
import type { HmacSecret, PlatformCrypto } from './crypto/types.js';
import { KybWebhookError, rejection } from './errors.js';

/** One HMAC secret version; `notAfter` ends it (the 24-hour overlap after a rotation, spec 5.7). */
export interface SecretVersion {
  /** The endpoint secret, as shown in the dashboard. */
  secret: string;
  /** Last moment this version is accepted: a `Date` or Unix milliseconds. */
  notAfter?: Date | number;
}

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

const FIELD = /^([a-z][a-z0-9]*)=([^,=\s]+)$/;
const DIGITS = /^\d{1,15}$/;
const HEX64 = /^[0-9a-fA-F]{64}$/;
const VERSION = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses `t=<unix seconds>,v1=<64 hex>,kv=<version>` strictly: each of t, v1 and kv exactly once, no spaces.
 * Other keys are ignored so that a future `v2` scheme does not break today's receivers.
 *
 * @example
 * ```ts
 * parseSignatureHeader('t=1767225600,v1=' + 'ab'.repeat(32) + ',kv=3') // { timestamp: 1767225600, version: '3', … }
 * ```
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  const fields = new Map<string, string>();
  for (const part of header.split(',')) {
    const match = FIELD.exec(part);
    if (!match) throw rejection('signature_malformed', 'a field is not key=value');
    const [, key, value] = match as unknown as [string, string, string];
    if (fields.has(key)) throw rejection('signature_malformed', `field ${key} appears twice`);
    fields.set(key, value);
  }
  const t = fields.get('t');
  const v1 = fields.get('v1');
  const kv = fields.get('kv');
  if (t === undefined || !DIGITS.test(t)) throw rejection('signature_malformed', 't is missing or not an integer');
  if (v1 === undefined || !HEX64.test(v1)) throw rejection('signature_malformed', 'v1 is missing or not 64 hex digits');
  if (kv === undefined || !VERSION.test(kv)) throw rejection('signature_malformed', 'kv is missing or malformed');
  return { timestamp: Number(t), timestampText: t, mac: hexToBytes(v1), version: kv };
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

interface PreparedVersion {
  secret: Promise<HmacSecret>;
  notAfterMs: number;
}

/** Options of {@link createSignatureVerifier}. */
export interface SignatureVerifierOptions {
  secrets: SecretKeyring;
  /** Allowed clock skew in seconds, both ways (spec: 5 minutes). */
  toleranceSeconds: number;
  /** Clock in milliseconds. */
  now: () => number;
  /** Crypto implementation; the platform's by default. Exposed so tests can run both. */
  crypto?: PlatformCrypto;
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
): (header: string | undefined, body: Uint8Array) => Promise<{ version: string; timestamp: number }> {
  const platform = options.crypto ?? platformCrypto;
  const versions = new Map<string, PreparedVersion>();
  for (const [version, entry] of Object.entries(options.secrets)) {
    const { secret, notAfter } = typeof entry === 'string' ? { secret: entry, notAfter: undefined } : entry;
    if (!VERSION.test(version)) {
      throw new KybWebhookError('config_invalid', `Secret version "${version}" must match ${VERSION} (it is the kv of the header).`);
    }
    if (typeof secret !== 'string' || secret.length === 0) {
      throw new KybWebhookError('config_invalid', `The secret of version "${version}" is empty; set it from the dashboard.`);
    }
    const secretPromise = platform.importHmacSecret(secret);
    secretPromise.catch(() => {}); // surfaced on first use; avoids an unhandled rejection at start-up
    versions.set(version, {
      secret: secretPromise,
      notAfterMs: notAfter === undefined ? Number.POSITIVE_INFINITY : new Date(notAfter).getTime(),
    });
  }
  const toleranceMs = options.toleranceSeconds * 1000;

  return async (header, body) => {
    if (header === undefined || header.trim() === '') throw rejection('signature_missing');
    const parsed = parseSignatureHeader(header.trim());
    const version = versions.get(parsed.version);
    if (!version) throw rejection('signature_unknown_version', `kv=${parsed.version} is not configured`);
    const now = options.now();
    if (now > version.notAfterMs) throw rejection('signature_version_expired', `kv=${parsed.version} ended`);
    const skew = now - parsed.timestamp * 1000;
    if (skew > toleranceMs) throw rejection('signature_expired', `t is ${Math.round(skew / 1000)} s old`);
    if (-skew > toleranceMs) throw rejection('signature_future', `t is ${Math.round(-skew / 1000)} s ahead`);
    const ok = await platform.verifyHmac(await version.secret, `${parsed.timestampText}.`, body, parsed.mac);
    if (!ok) throw rejection('signature_mismatch', `kv=${parsed.version}`);
    return { version: parsed.version, timestamp: parsed.timestamp };
  };
}
