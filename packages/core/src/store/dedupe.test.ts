import { describe, expect, it } from 'vitest';
import { checkClaimResult, MAX_STORE_DURATION_MS, storeDurationMs } from './dedupe.js';

describe('checkClaimResult', () => {
  it.each([{ status: 'acquired', token: 't' }, { status: 'in_progress' }, { status: 'completed' }])(
    'passes the documented answer %j through',
    (answer) => {
      expect(checkClaimResult(answer)).toBe(answer);
    },
  );

  it.each([
    ['no token', { status: 'acquired' }],
    ['an empty token', { status: 'acquired', token: '' }],
    ['a number token', { status: 'acquired', token: 42 }],
    ['an array token', { status: 'acquired', token: ['t'] }],
    ['a token-like object', { status: 'acquired', token: { length: 1 } }],
  ])('refuses an acquired claim with %s, saying a string token is needed', (_case, answer) => {
    expect(() => checkClaimResult(answer)).toThrow(
      new TypeError(
        'the store answered claim() with status "acquired" but no token; it must return a non-empty string token',
      ),
    );
  });

  it.each([[{ status: 'duplicate' }], [{}], [true], [null], [undefined]])('refuses %j', (answer) => {
    expect(() => checkClaimResult(answer)).toThrow(TypeError);
    expect(() => checkClaimResult(answer)).toThrow(/something other than/);
  });
});

describe('storeDurationMs', () => {
  it('rounds a fraction up, never shorter than asked', () => {
    expect(storeDurationMs('leaseMs', 59_999.2)).toBe(60_000);
    expect(storeDurationMs('leaseMs', 0.1)).toBe(1);
    expect(storeDurationMs('leaseMs', 60_000)).toBe(60_000);
  });

  it('accepts exactly MAX_STORE_DURATION_MS, 100 years', () => {
    expect(MAX_STORE_DURATION_MS).toBe(100 * 365.25 * 86_400_000);
    expect(storeDurationMs('retainMs', MAX_STORE_DURATION_MS)).toBe(MAX_STORE_DURATION_MS);
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['NaN', Number.NaN],
    ['past 100 years', MAX_STORE_DURATION_MS + 1],
    ['infinite', Number.POSITIVE_INFINITY],
    ['a numeric string', '60000'],
    ['missing', undefined],
  ])('refuses a value that is %s with a RangeError naming the option, never the value', (_case, value) => {
    expect(() => storeDurationMs('retainMs', value as number)).toThrow(
      new RangeError('retainMs must be a positive number of milliseconds, at most 3155760000000 (100 years).'),
    );
  });
});
