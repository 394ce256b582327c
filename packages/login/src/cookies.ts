/** The attributes this package sets on its cookies. */
export interface CookieAttributes {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** A Set-Cookie value: httpOnly and SameSite=Lax always (the callback is a top-level GET from the login server). */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  const parts = [
    `${name}=${value}`,
    `Path=${attributes.path}`,
    `Max-Age=${Math.max(0, Math.floor(attributes.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (attributes.maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}

/** A cookie name as RFC 6265 allows it: an HTTP token. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Strips cookie whitespace: ASCII space and tab only (RFC 6265bis), never what `String.prototype.trim()` also strips.
 * A sibling subdomain may set `\u00a0__Host-kyb-login-session=…` (the browser's `__Host-` rule does not cover a name
 * that only starts with it after a non-breaking space); trimmed the JavaScript way, it read as the real `__Host-`
 * cookie, and planted a session or a login binding.
 */
function cookieTrim(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Every cookie of a Cookie header, as [name, value], in order. Pairs whose name is not a token are skipped: no name
 * this package reads can be spelt that way, and such a pair can only be a planted look-alike.
 */
export function readCookies(header: string | undefined): Array<[string, string]> {
  if (!header) return [];
  const cookies: Array<[string, string]> = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = cookieTrim(part.slice(0, eq));
    if (COOKIE_NAME.test(name)) cookies.push([name, cookieTrim(part.slice(eq + 1))]);
  }
  return cookies;
}

/** One cookie's value from a Cookie header; the first wins when a name repeats (the most specific path). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return readCookies(header).find(([cookieName]) => cookieName === name)?.[1];
}
