/**
 * Strict base64url (RFC 4648 §5, unpadded as RFC 7515 §2 requires), the definition both platform decoders answer
 * by. Native decoders disagree on what they let through (Node's Buffer reads `+` and `/` as `-` and `_` and skips `=`
 * and any stray character; Web decoders differ in padding and trailing bits), so the Web path checks each segment of
 * an attestation here, and the Node path refuses the same texts by native checks (crypto/node.ts): the two paths
 * cannot answer the same token differently.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
// -1 for characters outside the alphabet; only the first 128 code units are ever looked up.
const VALUES = new Int8Array(128).fill(-1);
for (let index = 0; index < ALPHABET.length; index++) VALUES[ALPHABET.charCodeAt(index)] = index;
// Without the u flag \w is exactly [A-Za-z0-9_]; the regular expression engine scans far faster than a JS loop.
const ALPHABET_ONLY = /^[\w-]*$/;

/**
 * Whether `text` is canonical unpadded base64url: only `A–Z a–z 0–9 - _`, no `=`, a length that is not 1 more
 * than a multiple of 4 (no whole byte fits in 6 bits), and zero bits after the last whole byte, so that each byte
 * string has exactly one accepted encoding.
 *
 * @example
 * ```ts
 * isBase64url('eyJhIjoxfQ') // true
 * isBase64url('eyJhIjoxfR') // false: non-zero trailing bits
 * isBase64url('a+b/')       // false: standard base64
 * ```
 */
export function isBase64url(text: string): boolean {
  const remainder = text.length & 3;
  if (remainder === 1 || !ALPHABET_ONLY.test(text)) return false;
  if (remainder === 0) return true;
  const last = VALUES[text.charCodeAt(text.length - 1)] as number;
  // 2 characters carry 1 byte (4 spare bits), 3 carry 2 bytes (2 spare bits).
  return (last & (remainder === 2 ? 0x0f : 0x03)) === 0;
}

/**
 * Decodes canonical unpadded base64url, or answers undefined for anything {@link isBase64url} refuses. The decoder
 * of the Web path (Node's decodes natively and compares the re-encoding, crypto/node.ts).
 *
 * @example
 * ```ts
 * new TextDecoder().decode(decodeBase64url('eyJhIjoxfQ')) // '{"a":1}'
 * decodeBase64url('AA==') // undefined: padded
 * ```
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!isBase64url(text)) return undefined;
  const length = text.length;
  const bytes = new Uint8Array((length * 3) >> 2);
  let out = 0;
  let index = 0;
  for (; index + 4 <= length; index += 4) {
    const word =
      ((VALUES[text.charCodeAt(index)] as number) << 18) |
      ((VALUES[text.charCodeAt(index + 1)] as number) << 12) |
      ((VALUES[text.charCodeAt(index + 2)] as number) << 6) |
      (VALUES[text.charCodeAt(index + 3)] as number);
    bytes[out++] = word >> 16;
    bytes[out++] = (word >> 8) & 0xff;
    bytes[out++] = word & 0xff;
  }
  if (index < length) {
    let word =
      ((VALUES[text.charCodeAt(index)] as number) << 18) | ((VALUES[text.charCodeAt(index + 1)] as number) << 12);
    bytes[out++] = word >> 16;
    if (length - index === 3) {
      word |= (VALUES[text.charCodeAt(index + 2)] as number) << 6;
      bytes[out++] = (word >> 8) & 0xff;
    }
  }
  return bytes;
}
