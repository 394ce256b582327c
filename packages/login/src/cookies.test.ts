import { describe, expect, it } from 'vitest';
import { readCookie, readCookies } from './cookies.js';

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
