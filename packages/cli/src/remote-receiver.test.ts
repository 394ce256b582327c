import { describe, expect, it } from 'vitest';
import { parseSince } from './commands/recover.js';
import { signingSecret } from './remote-receiver.js';

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
