/** The string patterns of the envelope, in a module without zod (the receiver's hot path does not load zod). */

/**
 * A 26-character ULID in Crockford base32 (first character 0–7: the 48-bit time fits), either case. The lower-case
 * letters are listed rather than given by the `i` flag: the same strings match (without `u`, no character outside
 * ASCII folds into it), and V8's matcher for a case-insensitive class costs about 800 more instructions per event id
 * on Node 24 (docs/architecture.md §3.4).
 *
 * @example
 * ```ts
 * ULID_PATTERN.test('01JD2Z3K4M5N6P7Q8R9S0T1V2W') // true
 * ```
 */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$/;

/** An event type: 1 to 200 printable ASCII characters, no spaces (e.g. `kyb.data_request.released`). */
export const EVENT_TYPE_PATTERN = /^[\x21-\x7e]{1,200}$/;

/**
 * `pattern.test`, remembering the last string that passed: equal strings always get the same answer, so a repeat is
 * answered by one string comparison. The event type, the `api_version`, the signature's key version and the delivery
 * attempt repeat from one delivery to the next, and a `RegExp` call costs about 1,200 instructions on Node 24 even
 * once optimized (docs/architecture.md §3.4). A /g or /y pattern is tested from the start of the string each time, as
 * zod tests it.
 *
 * @example
 * ```ts
 * const isApiVersion = rememberingTest(/^\d{4}-\d{2}-\d{2}$/)
 * isApiVersion('2026-01-01') // true, tested
 * isApiVersion('2026-01-01') // true, remembered
 * ```
 */
export function rememberingTest(pattern: RegExp): (text: string) => boolean {
  const fromStart = pattern.global || pattern.sticky;
  let passed: string | undefined;
  return (text) => {
    if (text === passed) return true;
    if (fromStart) pattern.lastIndex = 0;
    if (!pattern.test(text)) return false;
    passed = text;
    return true;
  };
}
