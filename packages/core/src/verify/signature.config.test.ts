/** Issue 11 §4: the public signature verifier fails closed on an end date that does not parse. */
import { describe, expect, it } from 'vitest';
import { createSignatureVerifier } from './signature.js';

describe('createSignatureVerifier configuration', () => {
  it.each<[string, unknown]>([
    ["'24h'", '24h'],
    ['NaN', Number.NaN],
    ['an Invalid Date', new Date('not a date')],
  ])('refuses a notAfter of %s instead of keeping the secret valid forever', (_name, notAfter) => {
    expect(() =>
      createSignatureVerifier({
        secrets: { '2': { secret: 'old', notAfter: notAfter as number } },
        toleranceSeconds: 300,
        now: Date.now,
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message: expect.stringMatching(/notAfter of secret version "2"/),
      }),
    );
  });
});
