/** Crockford base32: no I, L, O or U, so ids survive being read aloud or retyped. */
const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const MAX_ULID_TIME = 2 ** 48 - 1;
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/**
 * A new ULID: 48-bit millisecond time then 80 random bits, as 26 Crockford base32 characters. The service uses
 * ULIDs as `event_id` (spec 2.3), so fixtures need ids a receiver's envelope schema accepts.
 *
 * @param timeMs - the time part in Unix milliseconds; defaults to now.
 * @example
 * ```ts
 * const eventId = ulid() // '01JH4Z6V4M5Q8R2T7W9XKCNBDF'
 * ```
 */
export function ulid(timeMs: number = Date.now()): string {
  if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs > MAX_ULID_TIME) {
    throw new RangeError('ULID time must be an integer between 0 and 2^48 - 1 milliseconds.');
  }
  return encodeTime(timeMs) + encodeRandom(crypto.getRandomValues(new Uint8Array(10)));
}

/**
 * The millisecond time stored in a ULID.
 *
 * @example
 * ```ts
 * ulidTime(ulid(1_700_000_000_000)) // 1700000000000
 * ```
 */
export function ulidTime(id: string): number {
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i.test(id)) throw new TypeError('Not a 26-character ULID.');
  let time = 0;
  for (const char of id.slice(0, TIME_CHARS).toUpperCase()) time = time * 32 + CROCKFORD_ALPHABET.indexOf(char);
  return time;
}

function encodeTime(timeMs: number): string {
  let remaining = timeMs;
  let out = '';
  // Division rather than bit shifts: 48 bits do not fit JavaScript's 32-bit shift operators.
  for (let i = 0; i < TIME_CHARS; i++) {
    out = CROCKFORD_ALPHABET.charAt(remaining % 32) + out;
    remaining = Math.floor(remaining / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bufferedBits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bufferedBits += 8;
    while (bufferedBits >= 5) {
      bufferedBits -= 5;
      out += CROCKFORD_ALPHABET.charAt((buffer >> bufferedBits) & 31);
    }
    buffer &= (1 << bufferedBits) - 1;
  }
  // 80 bits divide evenly into 16 characters, so nothing is left over.
  return out.slice(0, RANDOM_CHARS);
}
