/*
 * The job id of an event: pg-boss job ids are UUIDs, and `send` with an id that already exists in the queue inserts
 * nothing (its INSERT … ON CONFLICT DO NOTHING) and resolves null. Deriving the id from the event's dedupe key makes
 * that the queue's dedupe, in one round trip and across every process of a fleet, with no table of our own.
 */

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * The job id of the event with dedupe key `key`: the first 128 bits of SHA-256(key, UTF-8), marked as an RFC 9562
 * version 8 (custom) UUID. The same key always gives the same id, in every process and every version of this package.
 * WebCrypto, so it runs wherever pg-boss does without importing node:crypto.
 *
 * @example
 * ```ts
 * const id = await jobIdOf('01JD3Q8F2M6X1N0C4T7B9R5K2W') // e.g. '5c1f…-…-8…-…-…'
 * await boss.findJobs('kyb-webhooks', { id })
 * ```
 */
export async function jobIdOf(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)));
  const bytes = digest.subarray(0, 16);
  // Version 8 ("custom": a hash other than the MD5/SHA-1 of versions 3 and 5) and the RFC variant, so the id is a
  // well-formed UUID that no random (version 4) id pg-boss makes for other jobs can equal.
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => HEX[byte]!).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
