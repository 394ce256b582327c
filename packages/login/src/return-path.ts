/**
 * Where the browser may be sent after sign-in: only a path on the app's own origin. Anything that a browser could
 * resolve to another origin is refused: absolute URLs, scheme-relative `//host`, backslashes (browsers read `/\host`
 * as `//host`), control characters and whitespace (stripped by URL parsers, turning `/\t/host` into `//host`), and
 * encoded forms of those (`/%2F%2Fhost` is harmless to the browser, but a framework that decodes before
 * redirecting would make it `//host`, so it is refused as well).
 *
 * @returns the path, or undefined when it is not a safe same-origin path.
 *
 * @example
 * ```ts
 * safeReturnPath('/account?tab=2')    // '/account?tab=2'
 * safeReturnPath('//evil.example')    // undefined
 * safeReturnPath('https://evil.test') // undefined
 * ```
 */
export function safeReturnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  if (!value.startsWith('/') || value.startsWith('//')) return undefined;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u0020\u007f]/.test(value)) return undefined;
  let decoded = value;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  if (decoded.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(decoded)) return undefined;
  // The final word: resolved against a placeholder origin it must stay on that origin.
  const base = 'http://return-path.invalid';
  const url = new URL(value, base);
  if (url.origin !== base) return undefined;
  return value;
}
