import { describe, expect, it } from 'vitest';
import { expectConfigInvalid } from '../test-kit.js';
import { validateReceiverOptions } from './receiver-options.js';
import { createMemoryStore } from './store/memory-store.js';
import type { DedupeStore } from './store/dedupe.js';
import { streamOrdering } from './ordering/stream-ordering.js';
import { createReceiver } from './receiver.js';

/** The message of the config_invalid error `run` throws (the test fails when it throws nothing else). */
const messageOf = (run: () => unknown): string => expectConfigInvalid(run).message;

// The edges of createReceiver's numeric options and of its cross-option rules: the last value accepted and the
// first refused, and the message a user gets for the refused one.

const secrets = { '3': 'whsec_0123456789' };
/** 100 years, the longest every store can keep (MAX_STORE_DURATION_MS). */
const MAX_STORE_DURATION_MS = 3_155_760_000_000;
/** The default retainMs: 30 days. */
const DEFAULT_RETAIN_MS = 30 * 86_400_000;
const fetchEventsAfter = () => [];

describe('store durations (leaseMs, retainMs, ordering.cursorRetainMs): above 0 and at most 100 years', () => {
  it.each<[string, (ms: number) => Record<string, unknown>]>([
    ['leaseMs', (ms) => ({ secrets, leaseMs: ms })],
    ['retainMs', (ms) => ({ secrets, retainMs: ms })],
    ['ordering.cursorRetainMs', (ms) => ({ secrets, ordering: { mode: 'off', cursorRetainMs: ms } })],
  ])('%s: 0 is refused as zero', (path, options) => {
    expect(messageOf(() => validateReceiverOptions(options(0)))).toBe(
      `createReceiver: \`${path}\` must be a positive finite number of milliseconds, got zero.`,
    );
  });

  it.each<[string, (ms: number) => Record<string, unknown>]>([
    ['leaseMs', (ms) => ({ secrets, leaseMs: ms })],
    ['retainMs', (ms) => ({ secrets, retainMs: ms })],
    ['ordering.cursorRetainMs', (ms) => ({ secrets, ordering: { mode: 'off', cursorRetainMs: ms } })],
  ])('%s: 100 years is accepted, a millisecond more is refused', (path, options) => {
    expect(() => validateReceiverOptions(options(MAX_STORE_DURATION_MS))).not.toThrow();
    expect(messageOf(() => validateReceiverOptions(options(MAX_STORE_DURATION_MS + 1)))).toBe(
      `createReceiver: \`${path}\` must be at most 3155760000000 ms (100 years), the longest every store can keep, got 3155760000001.`,
    );
  });

  it.each<[string, (ms: unknown) => Record<string, unknown>]>([
    ['leaseMs', (ms) => ({ secrets, leaseMs: ms })],
    ['retainMs', (ms) => ({ secrets, retainMs: ms })],
    ['ordering.cursorRetainMs', (ms) => ({ secrets, ordering: { mode: 'off', cursorRetainMs: ms } })],
  ])('%s: a number in a string is refused as a string', (path, options) => {
    expect(messageOf(() => validateReceiverOptions(options('60000')))).toBe(
      `createReceiver: \`${path}\` must be a positive finite number of milliseconds, got a string.`,
    );
  });

  it('a fraction of a millisecond above 0 is accepted', () => {
    expect(() => validateReceiverOptions({ secrets, retainMs: 0.5 })).not.toThrow();
  });
});

describe('ordering.backfillRetryAfterMs: a whole number of milliseconds from 0 to an hour', () => {
  const withRetry = (backfillRetryAfterMs: number) => ({
    secrets,
    ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, backfillRetryAfterMs }),
  });

  it.each([0, 5_000, 3_600_000])('accepts %i', (ms) => {
    expect(() => validateReceiverOptions(withRetry(ms))).not.toThrow();
  });

  it.each<[number, string]>([
    [3_600_001, 'a number'],
    [-1, 'a negative number'],
    [1.5, 'a fraction'],
  ])('refuses %d, saying the range and the default', (ms, kind) => {
    expect(messageOf(() => validateReceiverOptions(withRetry(ms)))).toBe(
      'createReceiver: `ordering.backfillRetryAfterMs` must be a whole number of milliseconds from 0 (ask every time) ' +
        `to 3600000 (an hour); the default is 5000. Got ${kind}.`,
    );
  });
});

describe('ordering.backfillRetryAfterMs: a number in a string is refused', () => {
  it('refuses 5000 as a string, saying the range and the default', () => {
    expect(
      messageOf(() => validateReceiverOptions({ secrets, ordering: { mode: 'off', backfillRetryAfterMs: '5000' } })),
    ).toBe(
      'createReceiver: `ordering.backfillRetryAfterMs` must be a whole number of milliseconds from 0 (ask every time) ' +
        'to 3600000 (an hour); the default is 5000. Got a string.',
    );
  });
});

describe('ordering.cursorRetainMs must be at least retainMs', () => {
  it('accepts a cursorRetainMs equal to retainMs', () => {
    expect(() =>
      validateReceiverOptions({ secrets, retainMs: 60_000, ordering: { mode: 'off', cursorRetainMs: 60_000 } }),
    ).not.toThrow();
  });

  it('accepts a cursorRetainMs equal to the default retainMs (30 days)', () => {
    expect(() =>
      validateReceiverOptions({ secrets, ordering: { mode: 'off', cursorRetainMs: DEFAULT_RETAIN_MS } }),
    ).not.toThrow();
  });

  it('refuses a cursorRetainMs shorter than retainMs, saying why and how to fix it', () => {
    expect(
      messageOf(() =>
        validateReceiverOptions({ secrets, retainMs: 60_000, ordering: { mode: 'off', cursorRetainMs: 59_999 } }),
      ),
    ).toBe(
      'createReceiver: `ordering.cursorRetainMs` (59999 ms) must be at least retainMs (60000 ms): a cursor that ' +
        "expires before its stream's records makes the next event look like a new stream; raise it, or leave it out " +
        'for 400 days.',
    );
  });

  it('refuses a cursorRetainMs a millisecond shorter than the default retainMs', () => {
    expect(
      messageOf(() =>
        validateReceiverOptions({ secrets, ordering: { mode: 'off', cursorRetainMs: DEFAULT_RETAIN_MS - 1 } }),
      ),
    ).toContain(`\`ordering.cursorRetainMs\` (${DEFAULT_RETAIN_MS - 1} ms) must be at least retainMs (2592000000 ms)`);
  });
});

describe('ordering.onUnfillable needs a store that can record a skip (skipSeq)', () => {
  /** A store that keeps stream cursors but cannot record a skip. */
  function storeWithoutSkipSeq(): DedupeStore {
    const { skipSeq: _skipSeq, listSkips: _listSkips, ...rest } = createMemoryStore();
    return rest as DedupeStore;
  }
  const onUnfillable = () => 'wait' as const;

  it('refuses onUnfillable with a cursor store without skipSeq, saying what to use', () => {
    expect(
      messageOf(() =>
        validateReceiverOptions({
          secrets,
          store: storeWithoutSkipSeq(),
          ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, onUnfillable }),
        }),
      ),
    ).toBe(
      'createReceiver: `store` has no skipSeq, which ordering.onUnfillable needs to record a skip with its reason: ' +
        'use a built-in store (createMemoryStore, createRedisStore or a SQL store), implement skipSeq, or remove onUnfillable.',
    );
  });

  it('accepts a cursor store without skipSeq when no onUnfillable is set', () => {
    expect(() =>
      validateReceiverOptions({
        secrets,
        store: storeWithoutSkipSeq(),
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter }),
      }),
    ).not.toThrow();
  });

  it('accepts onUnfillable with the default store (no store option), which records skips', () => {
    expect(() =>
      validateReceiverOptions({
        secrets,
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, onUnfillable }),
      }),
    ).not.toThrow();
  });

  it('accepts onUnfillable with a built-in store', () => {
    expect(() =>
      validateReceiverOptions({
        secrets,
        store: createMemoryStore(),
        ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, onUnfillable }),
      }),
    ).not.toThrow();
  });
});

// The spec fixes the skew at 5 minutes (5.7, 8); a typo in minutes or milliseconds widened the replay window to days.
describe('toleranceSeconds: above 0 and at most 300, the spec’s 5 minutes', () => {
  it('accepts 300 and refuses 301, saying what the spec allows', () => {
    expect(() => validateReceiverOptions({ secrets, toleranceSeconds: 300 })).not.toThrow();
    expect(messageOf(() => validateReceiverOptions({ secrets, toleranceSeconds: 301 }))).toBe(
      'createReceiver: `toleranceSeconds` must be at most 300 seconds: the spec allows 5 minutes of clock skew, and ' +
        'more widens the window for replayed deliveries; use 300.',
    );
  });

  it('refuses ten days (864000 s)', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets, toleranceSeconds: 864_000 }))).toContain(
      'must be at most 300 seconds',
    );
  });
});

// Read with its newline from a secrets file, an audience never equals the token's aud: every attested delivery 401.
describe('attestation.issuer and attestation.audience: no whitespace around them', () => {
  const attestation = {
    issuer: 'https://kyb.example.com',
    audience: '3b241101-e2bb-4255-8caf-4136c566a962',
    jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json',
  };
  it.each<[string, Record<string, string>, string]>([
    ['audience', { audience: `${attestation.audience}\n` }, 'process.env.KYB_AUDIENCE?.trim()'],
    ['issuer', { issuer: ` ${attestation.issuer}` }, 'process.env.KYB_ATTESTATION_ISSUER?.trim()'],
  ])('refuses an %s with whitespace around it, without repeating it', (name, override, trim) => {
    const message = messageOf(() => validateReceiverOptions({ attestation: { ...attestation, ...override } }));
    expect(message).toBe(
      `createReceiver: \`attestation.${name}\` has leading or trailing whitespace (a newline read from a secrets ` +
        `file, a space pasted with it): trim it, e.g. \`${trim}\`.`,
    );
  });

  it('accepts an audience that is not a UUID', () => {
    expect(() =>
      validateReceiverOptions({ attestation: { ...attestation, audience: 'merchant-client-domain' } }),
    ).not.toThrow();
  });
});

// notAfter is Unix milliseconds; one in seconds (the unit of the header's t) ended the version in 1970.
describe('secrets: a notAfter in seconds, and a keyring whose every version has ended', () => {
  const now = Date.UTC(2026, 10, 23, 8, 30, 0);
  it.each<[string, Date | number]>([
    ['a number', Math.floor(now / 1000) + 86_400],
    ['a Date', new Date(Math.floor(now / 1000) + 86_400)],
  ])('refuses a notAfter in seconds given as %s', (_case, notAfter) => {
    expect(
      messageOf(() => validateReceiverOptions({ secrets: { '2': { secret: 'old', notAfter }, ...secrets } })),
    ).toBe(
      "createReceiver: `secrets['2'].notAfter` is before 1973: notAfter is Unix milliseconds or a Date; this looks " +
        'like seconds: multiply by 1000.',
    );
  });

  it('refuses at creation a keyring whose every version ended by the receiver’s clock', () => {
    expect(
      messageOf(() => createReceiver({ secrets: { '2': { secret: 'old', notAfter: now - 1 } }, now: () => now })),
    ).toContain('Every secret version has already ended');
  });

  it('creates the receiver while the last version has not ended', () => {
    expect(() =>
      createReceiver({ secrets: { '2': { secret: 'old', notAfter: now } }, now: () => now, logger: false }),
    ).not.toThrow();
  });
});
