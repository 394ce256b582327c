import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import { readClock } from './clock.js';

// Every comparison with NaN is false, so a clock that answers no number would pass every time check: readClock
// refuses it with a retryable internal_error instead.

describe('readClock', () => {
  it('answers the reading of a clock in Unix milliseconds', () => {
    expect(readClock(() => 1_767_225_600_000)).toBe(1_767_225_600_000);
  });

  it.each<[string, unknown, string]>([
    ['undefined (a clock without return)', undefined, 'undefined'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['a number in a string', '1767225600000', 'a string'],
    ['a Date', new Date(1_767_225_600_000), 'a Date'],
  ])('refuses %s with internal_error, naming only its kind', (_case, reading, kind) => {
    let thrown: unknown;
    try {
      readClock(() => reading as number);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KybWebhookError);
    expect({ code: (thrown as KybWebhookError).code, detail: (thrown as KybWebhookError).detail }).toEqual({
      code: 'internal_error',
      detail: `the clock (now) answered ${kind}, not Unix milliseconds`,
    });
  });
});
