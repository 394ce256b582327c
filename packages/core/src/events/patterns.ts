/** The string patterns of the envelope, in a module without zod (the receiver's hot path does not load zod). */

/**
 * A 26-character ULID in Crockford base32 (first character 0–7: the 48-bit time fits).
 *
 * @example
 * ```ts
 * ULID_PATTERN.test('01JD2Z3K4M5N6P7Q8R9S0T1V2W') // true
 * ```
 */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;

/** An event type: 1 to 200 printable ASCII characters, no spaces (e.g. `kyb.data_request.released`). */
export const EVENT_TYPE_PATTERN = /^[\x21-\x7e]{1,200}$/;
