import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import { checkRegisteredClaims } from './attestation-claims.js';

// Each time rule is written "not within" so that a NaN on either side refuses: `exp <= NaN` and `iat > NaN` are both
// false, so the plain comparisons let an expired token through under a clock that answered no number.

const NOW_S = 1_795_000_000;
const options = { issuer: 'https://kyb.example.com', audience: 'client-domain' };
const claims = {
  iss: options.issuer,
  aud: options.audience,
  exp: NOW_S + 60,
  iat: NOW_S - 60,
  event_id: 'e',
  stream_id: 's',
  seq: 1,
  request_id: 's',
};

function refusalOf(run: () => void): { code: string; detail: string | undefined } | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof KybWebhookError) return { code: error.code, detail: error.detail };
    throw error;
  }
  return undefined;
}

describe('checkRegisteredClaims refuses on a time that is not a number', () => {
  it('accepts the claims at a real time', () => {
    expect(refusalOf(() => checkRegisteredClaims(claims, options, NOW_S, 30, false))).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, boolean, RegExp]>([
    ['exp, for a pushed delivery', {}, false, /^"exp" claim timestamp check failed/],
    ['iat, for a fetched event (whose exp is not checked)', {}, true, /^"iat" claim is in the future$/],
    ['nbf, when the token has one', { nbf: NOW_S - 60 }, true, /^"nbf" claim timestamp check failed/],
  ])('%s', (_case, extra, fetched, detail) => {
    const refused = refusalOf(() => checkRegisteredClaims({ ...claims, ...extra }, options, Number.NaN, 30, fetched));
    expect(refused).toEqual({ code: 'attestation_invalid', detail: expect.stringMatching(detail) });
  });

  it('still accepts a token without nbf at a real time (an absent nbf is no refusal)', () => {
    expect(refusalOf(() => checkRegisteredClaims(claims, options, NOW_S, 0, true))).toBeUndefined();
  });
});
