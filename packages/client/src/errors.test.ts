import { describe, expect, it } from 'vitest';
import { InsufficientCreditError, KybApiError, isKybApiError, readCreditAmounts } from './errors.js';

const fields = { status: 503, code: 'service_unavailable', message: 'GET /x: 503', operation: 'GET /x', attempts: 4 };

describe('KybApiError', () => {
  it('keeps the cause it is given, and has no cause property without one', () => {
    const cause = new Error('socket hang up');
    expect(new KybApiError({ ...fields, cause }).cause).toBe(cause);
    const plain = new KybApiError(fields);
    expect(Object.hasOwn(plain, 'cause')).toBe(false);
    expect(plain).toMatchObject({ name: 'KybApiError', status: 503, code: 'service_unavailable', attempts: 4 });
  });

  it('has retryAfterMs only when the service asked for a wait', () => {
    expect(new KybApiError({ ...fields, retryAfterMs: 0 }).retryAfterMs).toBe(0);
    expect(new KybApiError(fields).retryAfterMs).toBeUndefined();
  });

  it('an InsufficientCreditError is named so, is a 402 insufficient_credit, and carries the amounts given', () => {
    const error = new InsufficientCreditError({
      message: 'POST /x: 402',
      operation: 'POST /x',
      attempts: 1,
      amounts: { requiredCents: 500, availableCents: 120, shortfallCents: 380, currency: 'EUR' },
    });
    expect(error.name).toBe('InsufficientCreditError');
    expect(String(error)).toBe('InsufficientCreditError: POST /x: 402');
    expect(error).toMatchObject({ status: 402, code: 'insufficient_credit', shortfallCents: 380, currency: 'EUR' });
    const bare = new InsufficientCreditError({ message: 'm', operation: 'POST /x', attempts: 1 });
    expect(bare.requiredCents).toBeUndefined();
  });
});

describe('readCreditAmounts', () => {
  it.each([
    ['{"required_cents":500,"available_cents":120}', { requiredCents: 500, availableCents: 120, shortfallCents: 380 }],
    ['{"quoted_cents":500,"balance_cents":120}', { requiredCents: 500, availableCents: 120, shortfallCents: 380 }],
    ['{"cost_cents":500,"credit_cents":120}', { requiredCents: 500, availableCents: 120, shortfallCents: 380 }],
    ['{"price_cents":500,"credit_cents":900}', { requiredCents: 500, availableCents: 900, shortfallCents: 0 }],
    ['{"shortfall_cents":7}', { shortfallCents: 7 }],
    [
      '{"missing_cents":7,"required_cents":500,"available_cents":100}',
      { requiredCents: 500, availableCents: 100, shortfallCents: 7 },
    ],
    [
      '{"errors":[{"code":"insufficient_credit","required_cents":300,"available_cents":50,"currency":"eur"}]}',
      { requiredCents: 300, availableCents: 50, shortfallCents: 250, currency: 'EUR' },
    ],
    [
      '{"error":{"code":"insufficient_credit","required_cents":300,"available_cents":0}}',
      { requiredCents: 300, availableCents: 0, shortfallCents: 300 },
    ],
    // Zero is an amount; only one of required and available gives no shortfall.
    ['{"required_cents":0}', { requiredCents: 0 }],
    ['{"available_cents":250}', { availableCents: 250 }],
    // Not whole, non-negative numbers of cents: not amounts.
    ['{"required_cents":"500","available_cents":-5,"shortfall_cents":1.5}', {}],
    ['{"required_cents":1e300}', {}],
    ['{"currency":"eur"}', { currency: 'EUR' }],
    ['{"currency":"EURO"}', {}],
    ['{"currency":"XEUR"}', {}],
    ['{"currency":["usd"],"error":{"currency":"chf"}}', { currency: 'CHF' }],
    ['{"currency":"€12"}', {}],
    ['null', {}],
    ['[1,2]', {}],
    ['"required_cents"', {}],
    ['{"error":null,"required_cents":12}', { requiredCents: 12 }],
    ['{"error":[{"required_cents":12}]}', {}],
    ['<html>402</html>', {}],
    ['', {}],
  ])('%s → %j', (text, amounts) => {
    expect(readCreditAmounts(text)).toStrictEqual(amounts);
  });
});

describe('isKybApiError', () => {
  it('knows the errors of this copy, subclasses included', () => {
    expect(isKybApiError(new KybApiError(fields))).toBe(true);
    expect(isKybApiError(new InsufficientCreditError({ message: 'm', operation: 'POST /x', attempts: 1 }))).toBe(true);
  });

  it('knows a KybApiError of another copy of the package by its name and code', () => {
    const foreign = Object.assign(new Error('GET /x: 503'), { name: 'KybApiError', code: 'service_unavailable' });
    expect(isKybApiError(foreign)).toBe(true);
  });

  it('knows an InsufficientCreditError of another copy too (a KybApiError there)', () => {
    const foreign = Object.assign(new Error('POST /x: 402'), {
      name: 'InsufficientCreditError',
      code: 'insufficient_credit',
    });
    expect(isKybApiError(foreign)).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('boom')],
    ['an Error with a code but another name', Object.assign(new Error('x'), { code: 'ECONNRESET' })],
    ['an Error named KybApiError without a code', Object.assign(new Error('x'), { name: 'KybApiError' })],
    ['an object that only looks like one', { name: 'KybApiError', code: 'timeout', message: 'x' }],
    ['undefined', undefined],
  ])('is false for %s', (_what, value) => {
    expect(isKybApiError(value)).toBe(false);
  });
});
