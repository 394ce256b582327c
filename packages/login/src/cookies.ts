/** The attributes this package sets on its cookies. */
export interface CookieAttributes {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** A Set-Cookie value: httpOnly and SameSite=Lax always (the callback is a top-level GET from the login server). */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  const parts = [`${name}=${value}`, `Path=${attributes.path}`, `Max-Age=${Math.max(0, Math.floor(attributes.maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Lax'];
  if (attributes.maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Every cookie of a Cookie header, as [name, value], in order. */
export function readCookies(header: string | undefined): Array<[string, string]> {
  if (!header) return [];
  const cookies: Array<[string, string]> = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1) cookies.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return cookies;
}

/** One cookie's value from a Cookie header; the first wins when a name repeats (the most specific path). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
