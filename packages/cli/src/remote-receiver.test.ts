import { describe, expect, it } from 'vitest';
import { failureText, parseSince } from './commands/recover.js';
import { expiredAttestation, signingSecret } from './remote-receiver.js';

// How recover finds its secret and reads --since; the sending itself is tested end to end in commands/recover.test.ts.
describe('signingSecret', () => {
  it('signs with the highest KYB_SECRET_V<n> set, or the one asked for', () => {
    const env = { KYB_SECRET_V1: 'whsec_one', KYB_SECRET_V10: 'whsec_ten', KYB_SECRET_V2: ' whsec_two ' };
    expect(signingSecret(env)).toEqual({ version: '10', secret: 'whsec_ten' });
    expect(signingSecret(env, '2')).toEqual({ version: '2', secret: 'whsec_two' });
  });

  it('a missing secret is a usage error naming the variable, never a value', () => {
    expect(() => signingSecret({})).toThrow(/set KYB_SECRET_V<n>/);
    expect(() => signingSecret({ KYB_SECRET_V1: 'whsec_one' }, '3')).toThrow(
      /KYB_SECRET_V3 is not set \(the environment has version 1\)/,
    );
    try {
      signingSecret({ KYB_SECRET_V1: 'whsec_one' }, '3');
    } catch (error) {
      expect((error as Error).message).not.toContain('whsec_one');
    }
  });
});

describe('parseSince', () => {
  it('an ISO date or a duration ago', () => {
    const now = Date.parse('2026-02-01T00:00:00Z');
    expect(parseSince('2026-01-31T08:00:00Z', now)).toBe(Date.parse('2026-01-31T08:00:00Z'));
    expect(parseSince('90m', now)).toBe(now - 90 * 60_000);
    expect(parseSince('12h', now)).toBe(now - 12 * 3_600_000);
    expect(parseSince('7d', now)).toBe(now - 7 * 86_400_000);
    expect(() => parseSince('1767225600', now)).toThrow(/ISO date/);
    expect(() => parseSince('yesterday', now)).toThrow(/ISO date/);
  });
});

describe('expiredAttestation', () => {
  const token = (claims: unknown) =>
    `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
  const now = Date.parse('2026-02-01T00:10:00Z');

  it('names when the attestation expired once it is past every receiver\u2019s leeway (60 s)', () => {
    expect(expiredAttestation(token({ exp: now / 1000 - 61 }), now)).toBe('2026-02-01T00:08:59.000Z');
    expect(expiredAttestation(token({ exp: now / 1000 - 60 }), now)).toBeUndefined();
    expect(expiredAttestation(token({ exp: now / 1000 + 600 }), now)).toBeUndefined();
  });

  it('leaves the judging to the receiver when there is no token or no usable exp', () => {
    for (const value of [undefined, 7, '', 'not-a-jwt', token({}), token({ exp: '1' }), token(null), 'a.!!!.c'])
      expect(expiredAttestation(value, now)).toBeUndefined();
  });
});

describe('failureText', () => {
  const at = (failure: Partial<Parameters<typeof failureText>[0]>) =>
    failureText(
      { event_id: 'e1', seq: 1, status: null, code: null, ...failure },
      'dr_1',
      'http://127.0.0.1:3000/kyb',
      '1',
    );

  it('says what happened and the way out, for each kind of failure', () => {
    expect(at({ code: 'event_not_served' })).toEqual({
      what: 'the delivery log shows it unacknowledged, but the KYB API did not serve it with the stream\u2019s events',
      fix: 'ask the service to send it again (kyb-webhooks redeliver dr_1), or its support',
    });
    expect(
      at({ code: 'attestation_expired', error: 'not sent: its attestation expired at 2026-01-01T00:00:00.000Z' }).what,
    ).toBe(
      'not sent: its attestation expired at 2026-01-01T00:00:00.000Z, so your receiver would refuse it (spec 5.5)',
    );
    expect(at({ error: 'timeout after 10000 ms' })).toEqual({
      what: 'your receiver gave no answer (timeout after 10000 ms)',
      fix: 'is it running at http://127.0.0.1:3000/kyb?',
    });
    expect(at({ status: 500, code: 'handler_failed' }).what).toBe('your receiver answered 500 handler_failed');
    expect(at({ status: 404 }).what).toBe('your receiver answered 404');
  });
});
