/**
 * How the option kit (option-validation.ts) words its messages: the kind of a value, never its content, and the option
 * name that a misspelt or foreign one most likely meant.
 */

/**
 * The option a misspelt or foreign option name most likely meant: an alias (another library's name for it), the
 * same name in another case or spelling (`max_body_bytes`), or the closest known name within a small edit distance.
 *
 * @example
 * ```ts
 * suggestOption('pth', ['path', 'onResult']) // 'path'
 * suggestOption('bodyLimit', ['maxBodyBytes'], { bodyLimit: 'maxBodyBytes' }) // 'maxBodyBytes'
 * suggestOption('colour', ['path']) // undefined
 * ```
 */
export function suggestOption(
  name: string,
  known: readonly string[],
  aliases: Record<string, string> = {},
): string | undefined {
  const wanted = normalizeName(name);
  for (const [alias, target] of Object.entries(aliases)) if (normalizeName(alias) === wanted) return target;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const option of known) {
    const candidate = normalizeName(option);
    const distance = editDistance(wanted, candidate);
    // A third of the shorter name: `pth` → `path` and `onResults` → `onResult`, but not `now` → `store`.
    const allowed = Math.max(1, Math.floor(Math.min(wanted.length, candidate.length) / 3));
    if (distance <= allowed && distance < bestDistance) {
      best = option;
      bestDistance = distance;
    }
  }
  return best;
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours. Names whose
 * lengths differ by more than 8 are never a near miss, so they answer Infinity without the quadratic work.
 *
 * @example
 * ```ts
 * editDistance('relaesed', 'released') // 1 (one swap)
 * editDistance('archived', 'released') // 6
 * ```
 */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Number.POSITIVE_INFINITY;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * How a value is shown in a message: its kind, never its content (an option's value may be a secret).
 *
 * @example
 * ```ts
 * describeValue('whsec_…')           // 'a string'
 * describeValue(Number.NaN)           // 'NaN'
 * describeValue(new Date('24h'))      // 'an Invalid Date'
 * describeValue(Promise.resolve(1))   // 'a Promise (missing await?)'
 * ```
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return value.length === 0 ? 'an empty string' : value.trim() === '' ? 'a blank string' : 'a string';
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      return value === 0
        ? 'zero'
        : value < 0
          ? 'a negative number'
          : Number.isInteger(value)
            ? 'a number'
            : 'a fraction';
    case 'boolean':
      return 'a boolean';
    case 'bigint':
      return 'a bigint';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
  }
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an Invalid Date' : 'a Date';
  if (typeof (value as { then?: unknown }).then === 'function') return 'a Promise (missing await?)';
  if (isPlainObject(value)) return 'an object';
  const constructorName = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof constructorName === 'string' && /^[A-Za-z_$][\w$]{0,40}$/.test(constructorName)
    ? `an instance of ${constructorName}`
    : 'an object';
}

/** A plain object of this realm or another one (a vm context, a test environment), or one without a prototype. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // Object.prototype of this realm or another one (a vm context, a test environment), or no prototype at all.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`: a position in words, for messages that describe an entry without
 * showing it.
 *
 * @example
 * ```ts
 * ordinal(22) // '22nd'
 * ```
 */
export function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/**
 * Names joined as a sentence lists them: `a`, `a and b`, `a, b and c` (or `or` for `last`).
 *
 * @example
 * ```ts
 * listOf(['get', 'set', 'del'], 'or') // 'get, set or del'
 * ```
 */
export function listOf(names: readonly string[], last = 'and'): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} ${last} ${names.at(-1)}`;
}
