/**
 * The longest return path, in bytes once percent-encoded. It travels in the transaction cookie (sealed, so about
 * 4/3 of its size) beside the state, nonce, verifier and redirect URI, and every login a browser has pending sends
 * its cookie to the callback in one Cookie header, which servers bound (nginx: 8 KB a line): with 1024 a cookie stays
 * near 2 KB, so three logins with the longest path still fit beside the app's own cookies.
 */
const MAX_RETURN_PATH_BYTES = 1024;

/**
 * Where the browser may be sent after sign-in: only a path on the app's own origin. Anything that a browser could
 * resolve to another origin is refused: absolute URLs, scheme-relative `//host` (also when it only appears once
 * `.`/`..` segments are resolved, as in `/.//host`), backslashes (browsers read `/\host` as `//host`), control
 * characters and whitespace (stripped by URL parsers, turning `/\t/host` into `//host`), and encoded forms of those
 * (`/%2F%2Fhost` is harmless to the browser, but a framework that decodes before redirecting would make it `//host`,
 * so it is refused as well).
 *
 * The answer is the path as a URL parser normalises it: dot segments resolved, and everything outside ASCII
 * percent-encoded (`/ā` → `/%C4%81`), because it becomes a Location header, which Node and fetch refuse to write
 * with other characters. It is at most {@link MAX_RETURN_PATH_BYTES} (1024) bytes long; a longer one is refused.
 *
 * @returns the normalised path, or undefined when it is not a safe same-origin path.
 *
 * @example
 * ```ts
 * safeReturnPath('/account?tab=2')    // '/account?tab=2'
 * safeReturnPath('/café')          // '/caf%C3%A9'
 * safeReturnPath('//evil.example')    // undefined
 * safeReturnPath('https://evil.test') // undefined
 * ```
 */
export function safeReturnPath(value: unknown): string | undefined {
  // The first bound only spares parsing huge input; the one that counts is on the encoded answer below.
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_PATH_BYTES) return undefined;
  if (!isSamePath(value)) return undefined;
  // The final word: resolved against a placeholder origin it must stay on that origin.
  const base = 'http://return-path.invalid';
  const url = new URL(value, base);
  if (url.origin !== base) return undefined;
  const path = url.pathname + url.search + url.hash;
  // Resolving dot segments can make `//host` out of `/.//host`: the normalised path passes the same checks.
  if (!isSamePath(path) || path.length > MAX_RETURN_PATH_BYTES) return undefined;
  return path;
}

function isSamePath(value: string): boolean {
  if (!value.startsWith('/') || value.startsWith('//')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u0020\u007f]/.test(value)) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !decoded.startsWith('//') && !/[\\\u0000-\u001f\u007f]/.test(decoded);
}
