import { describe, expect, it } from 'vitest';
import { ulid, ulidTime } from './ulid.js';

const ULID_SHAPE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

describe('ulid', () => {
  it('is 26 Crockford base32 characters whose first character is 0–7', () => {
    for (let i = 0; i < 500; i++) expect(ulid()).toMatch(ULID_SHAPE);
  });

  it('stores the millisecond time in its first 10 characters', () => {
    expect(ulid(0).slice(0, 10)).toBe('0000000000');
    expect(ulid(2 ** 48 - 1).slice(0, 10)).toBe('7ZZZZZZZZZ');
    // Reference value from the ULID spec's example timestamp.
    expect(ulid(1469918176385).slice(0, 10)).toBe('01ARYZ6S41');
    const time = 1_767_225_600_123;
    expect(ulidTime(ulid(time))).toBe(time);
  });

  it('sorts by time across milliseconds', () => {
    const earlier = ulid(1_700_000_000_000);
    const later = ulid(1_700_000_000_001);
    expect(earlier < later).toBe(true);
  });

  it('has random bits that differ between ids of the same millisecond', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => ulid(1_700_000_000_000)));
    expect(ids.size).toBe(1000);
    // Every character of the alphabet shows up in the random part: all 80 bits are used.
    const randomChars = new Set([...ids].flatMap((id) => [...id.slice(10)]));
    expect(randomChars.size).toBe(32);
  });

  it('rejects times that do not fit 48 bits', () => {
    expect(() => ulid(-1)).toThrow(RangeError);
    expect(() => ulid(2 ** 48)).toThrow(RangeError);
    expect(() => ulid(1.5)).toThrow(RangeError);
  });
});
