import { describe, expect, it } from 'vitest';
import { safeReturnPath } from './return-path.js';

describe('safeReturnPath', () => {
  it.each(['/', '/account', '/orders?page=2&sort=desc', '/a%20b', '/search?q=%2F%2Fnot-a-host'])(
    'keeps the same-origin path %j',
    (path) => {
      expect(safeReturnPath(path)).toBe(path);
    },
  );

  it.each([
    '//evil.example',
    '///evil.example',
    'https://evil.example/',
    'http:evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/%2F%2Fevil.example',
    '/%5Cevil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    ' /evil',
    'javascript:alert(1)',
    'evil.example',
    '',
    '/%E0%A4%A',
    // Raw spaces are no part of a URL a browser sends: refused rather than encoded.
    '/a b',
    '/search?q=a b',
  ])('refuses %j', (path) => {
    expect(safeReturnPath(path)).toBeUndefined();
  });

  it.each([
    ['/\u0101', '/%C4%81'],
    ['/caf\u00e9?q=\u00e9#\u00e9', '/caf%C3%A9?q=%C3%A9#%C3%A9'],
    ['/a/./b/../c', '/a/c'],
    ['/x?', '/x'],
  ])('answers %j percent-encoded and normalised, as %j (an ASCII Location on every framework)', (path, expected) => {
    expect(safeReturnPath(path)).toBe(expected);
  });

  it.each(['/.//evil.example', '/..//evil.example', '/a/..//evil.example'])(
    'refuses %j, which normalises to a scheme-relative //host',
    (path) => {
      expect(safeReturnPath(path)).toBeUndefined();
    },
  );

  it('takes a path of up to 1024 bytes once encoded, and refuses a longer one', () => {
    expect(safeReturnPath(`/${'a'.repeat(1023)}`)).toHaveLength(1024);
    expect(safeReturnPath(`/${'a'.repeat(1024)}`)).toBeUndefined();
    // 172 characters, but 1 027 bytes once percent-encoded (U+0101 is %C4%81).
    expect(safeReturnPath(`/${'\u0101'.repeat(170)}`)).toHaveLength(1021);
    expect(safeReturnPath(`/${'\u0101'.repeat(171)}`)).toBeUndefined();
  });

  it('refuses what is not a string', () => {
    expect(safeReturnPath(['/a'])).toBeUndefined();
  });
});
