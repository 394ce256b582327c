import { createHmac } from 'node:crypto';

/**
 * The parts of a Service-KYB-Signature header (spec 2.4, 5.7).
 *
 * @example
 * ```ts
 * const parts: SignatureHeaderParts = { timestamp: 1767225600, version: '1', secret: 'whsec_…' }
 * ```
 */
export interface SignatureHeaderParts {
  /** Unix seconds written as `t` and MACed with the body. */
  timestamp: number;
  /** Secret version written as `kv`. */
  version: string;
  /** The endpoint secret the MAC is keyed with. */
  secret: string;
}

/**
 * Builds `t=<unix>,v1=<hex hmac-sha256 over "<t>." + body bytes>,kv=<version>`. The MAC covers the exact bytes
 * given, so a test can sign bytes a JSON round trip would change (key order, whitespace, unicode escapes).
 *
 * @example
 * ```ts
 * const header = signatureHeader(body, { timestamp: 1767225600, version: '1', secret })
 * // 't=1767225600,v1=5f0c…,kv=1'
 * ```
 */
export function signatureHeader(
  body: string | Uint8Array,
  { timestamp, version, secret }: SignatureHeaderParts,
): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${mac},kv=${version}`;
}
