import { describe, expect, it } from 'vitest';
import { readCookie, readCookies, serializeCookie } from './cookies.js';

// A sibling subdomain cannot set a __Host- cookie, but it can set one whose name starts with a non-breaking space or
// another character that String.prototype.trim() strips: browsers send it back byte for byte, and Node reads header
// bytes as latin1. Read as `__Host-…`, it planted an attacker's session or login binding (found in Chromium).
describe('reading the Cookie header', () => {
  const planted = '\u00a0__Host-kyb-login-session=attacker; __Host-kyb-login-session=victim';

  it.each(['\u00a0', '\u2003', '\ufeff', '\u3000', '\u000b', '\f'])(
    'a name that starts with %j is not the cookie it spells after it',
    (prefix) => {
      const header = `${prefix}__Host-kyb-login-bind=attacker; __Host-kyb-login-bind=victim`;
      expect(readCookie(header, '__Host-kyb-login-bind')).toBe('victim');
      expect(readCookies(header)).toEqual([['__Host-kyb-login-bind', 'victim']]);
    },
  );

  it('the first of two real cookies of one name wins (the most specific path); a planted look-alike does not count', () => {
    expect(readCookie(planted, '__Host-kyb-login-session')).toBe('victim');
    expect(readCookie(`${planted}; __Host-kyb-login-session=other`, '__Host-kyb-login-session')).toBe('victim');
    expect(readCookie('\u00a0__Host-kyb-login-session=attacker', '__Host-kyb-login-session')).toBeUndefined();
  });

  it('ASCII spaces and tabs around names and values are cookie whitespace', () => {
    expect(readCookie('a=1;  \t b \t= 2 ', 'b')).toBe('2');
    expect(readCookies(' a = 1 ;\tb=2')).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });
});

describe('reading the Cookie header: what is not a cookie', () => {
  it('no header or an empty one has no cookies', () => {
    expect(readCookies(undefined)).toEqual([]);
    expect(readCookies('')).toEqual([]);
  });

  it('a part without = is skipped, the others still read', () => {
    expect(readCookies('flag; a=1; b')).toEqual([['a', '1']]);
    expect(readCookie('x; a=1', 'x')).toBeUndefined();
  });

  it('whitespace inside a value is kept: only its ends are cookie whitespace', () => {
    expect(readCookie('a= one  two ', 'a')).toBe('one  two');
  });
});

describe('writing a Set-Cookie value', () => {
  it('httpOnly, SameSite=Lax, the path and Max-Age; Secure when asked', () => {
    expect(serializeCookie('__Host-s', 'v', { path: '/', maxAgeSeconds: 28800, secure: true })).toBe(
      '__Host-s=v; Path=/; Max-Age=28800; HttpOnly; SameSite=Lax; Secure',
    );
    expect(serializeCookie('s', 'v', { path: '/auth/callback', maxAgeSeconds: 600.7, secure: false })).toBe(
      's=v; Path=/auth/callback; Max-Age=600; HttpOnly; SameSite=Lax',
    );
  });

  it('a cookie cleared (Max-Age 0 or less) also expires in the past, for browsers that ignore Max-Age', () => {
    for (const maxAgeSeconds of [0, -5]) {
      expect(serializeCookie('s', '', { path: '/', maxAgeSeconds, secure: true })).toBe(
        's=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure',
      );
    }
  });
});
