import { describe, expect, it } from 'vitest';
import { safeReturnPath } from './return-path.js';

describe('safeReturnPath', () => {
  it.each(['/', '/account', '/orders?page=2&sort=desc', '/a%20b', '/search?q=%2F%2Fnot-a-host'])('keeps the same-origin path %j', (path) => {
    expect(safeReturnPath(path)).toBe(path);
  });

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
  ])('refuses %j', (path) => {
    expect(safeReturnPath(path)).toBeUndefined();
  });

  it('refuses what is not a string', () => {
    expect(safeReturnPath(['/a'])).toBeUndefined();
  });
});
