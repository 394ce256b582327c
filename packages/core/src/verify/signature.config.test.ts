/** Issue 11 §4: the public signature verifier fails closed on an end date that does not parse. */
import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { expectConfigInvalid } from '../../test-kit.js';
import { createSignatureVerifier, type SecretKeyring } from './signature.js';

const NOW = Date.UTC(2026, 10, 23, 8, 30, 0);
const SECRET = 'signature-config-secret';

const verifierWith = (overrides: Record<string, unknown>) =>
  createSignatureVerifier({ secrets: { '3': SECRET }, toleranceSeconds: 300, now: () => NOW, ...overrides });

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

// Without a check, `skew > NaN` is false both ways: a missing tolerance (an unset environment variable through
// Number()) accepted a correctly MACed header from 1970, so any captured delivery could be replayed for ever.
describe('createSignatureVerifier refuses a toleranceSeconds that would widen or turn off the skew check', () => {
  it.each<[string, unknown, string]>([
    ['missing', undefined, 'got undefined'],
    ['NaN', Number.NaN, 'got NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'got Infinity'],
    ['a number in a string', '300', 'got a string'],
    ['zero', 0, 'got zero'],
    ['a negative number', -300, 'got a negative number'],
    ['one second over the spec', 301, 'the spec allows 5 minutes of clock skew'],
    ['ten days', 864_000, 'must be at most 300 seconds'],
  ])('refuses %s at creation', (_case, toleranceSeconds, words) => {
    expectConfigInvalid(() => verifierWith({ toleranceSeconds }), ['toleranceSeconds', words]);
  });

  it.each([300, 0.5])('accepts %s', (toleranceSeconds) => {
    expect(typeof verifierWith({ toleranceSeconds })).toBe('function');
  });

  it('refuses a now that is not a function', () => {
    expectConfigInvalid(() => verifierWith({ now: NOW }), ['now must be a clock in Unix milliseconds']);
  });
});

// The spec's t is Unix seconds; notAfter is milliseconds, so an end written like t fell in 1970 and every delivery
// under that kv got signature_version_expired until the service quarantined the endpoint.
describe('createSignatureVerifier refuses a notAfter in seconds', () => {
  const inSeconds = Math.floor(NOW / 1000) + 86_400;
  it.each<[string, Date | number]>([
    ['a number', inSeconds],
    ['a Date', new Date(inSeconds)],
    ['the last millisecond before the cut', 1e11 - 1],
  ])('as %s', (_case, notAfter) => {
    expectConfigInvalid(
      () => verifierWith({ secrets: { '2': { secret: 'old', notAfter }, '3': SECRET } }),
      ['notAfter of secret version "2" is Unix milliseconds or a Date; this looks like seconds: multiply by 1000.'],
    );
  });

  it('accepts the first millisecond of the cut, beside a current version', () => {
    expect(typeof verifierWith({ secrets: { '2': { secret: 'old', notAfter: 1e11 }, '3': SECRET } })).toBe('function');
  });
});

// Every delivery would be refused signature_version_expired: said at creation, not after hours of retries.
describe('createSignatureVerifier refuses a keyring whose every version has ended', () => {
  it.each<[string, SecretKeyring]>([
    ['one version', { '2': { secret: 'old', notAfter: NOW - 1 } }],
    [
      'two versions',
      { '2': { secret: 'old', notAfter: NOW - 1 }, '3': { secret: SECRET, notAfter: new Date(NOW - 60_000) } },
    ],
  ])('%s, ended by the verifier’s own clock', (_case, secrets) => {
    expectConfigInvalid(() => verifierWith({ secrets }), ['Every secret version has already ended']);
  });

  it('accepts a keyring whose last version ends at this very millisecond, and verifies under it', async () => {
    const verify = verifierWith({ secrets: { '3': { secret: SECRET, notAfter: NOW } } });
    const t = Math.floor(NOW / 1000);
    const body = new TextEncoder().encode('{}');
    const mac = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex');
    expect(await verify(`t=${t},v1=${mac},kv=3`, body)).toEqual({ version: '3', timestamp: t });
  });

  it('reads no clock at creation when a version never ends', () => {
    const now = vi.fn(() => NOW);
    verifierWith({ secrets: { '2': { secret: 'old', notAfter: NOW - 1 }, '3': SECRET }, now });
    expect(now).not.toHaveBeenCalled();
  });

  it('leaves a clock that answers no number at creation to the check of each delivery', () => {
    const now = () => undefined as unknown as number;
    expect(typeof verifierWith({ secrets: { '2': { secret: 'old', notAfter: NOW - 1 } }, now })).toBe('function');
  });
});
