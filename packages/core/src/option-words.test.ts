import { describe, expect, it } from 'vitest';
import { expectConfigInvalid } from '../test-kit.js';
import { optionRules } from './option-rules.js';
import { validateOptions, type OptionsSpec } from './option-validation.js';
import { listOf, suggestOption } from './option-words.js';
import { validateReceiverOptions } from './receiver-options.js';

/** The message of the config_invalid error `run` throws (the test fails when it throws nothing else). */
const messageOf = (run: () => unknown): string => expectConfigInvalid(run).message;

// How the option kit words a refusal (option-words.ts), seen where a user meets it: the "did you mean" of a
// config_invalid for a misspelt option name, and the kind of a bad number.

const secrets = { '3': 'whsec_0123456789' };
const attestation = {
  issuer: 'https://kyb.example.com',
  audience: 'b2f7c3e0-0000-4000-8000-000000000000',
  jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json',
};

/** A factory's spec with the given options, each a number of milliseconds. */
function specOf(...names: string[]): OptionsSpec {
  return {
    owner: 'createThing',
    example: 'createThing({})',
    options: Object.fromEntries(names.map((name) => [name, optionRules.delayMs()])),
  };
}

describe('"did you mean": a tie goes to the option listed first', () => {
  it('post is one letter from host and from port: host, listed first, is suggested', () => {
    expect(messageOf(() => validateOptions({ post: 1 }, specOf('host', 'port')))).toBe(
      'createThing: `post` is not an option: did you mean `host`?',
    );
  });

  it('post is one letter from port and from host: port, listed first, is suggested', () => {
    expect(messageOf(() => validateOptions({ post: 1 }, specOf('port', 'host')))).toBe(
      'createThing: `post` is not an option: did you mean `port`?',
    );
  });

  it('a closer option listed later still wins over a farther one listed first', () => {
    expect(suggestOption('hots', ['hostname', 'host'])).toBe('host');
  });
});

describe('"did you mean" compares names in lower case, without -, _ and spaces', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['kebab-case', { secrets, 'max-body-bytes': 1 }, 'maxBodyBytes'],
    ['words with spaces', { secrets, 'max body bytes': 1 }, 'maxBodyBytes'],
    ['upper case', { secrets, MAXBODYBYTES: 1 }, 'maxBodyBytes'],
    ['SCREAMING_SNAKE_CASE', { secrets, RETAIN_MS: 1 }, 'retainMs'],
  ])('%s', (_name, options, meant) => {
    expect(messageOf(() => validateReceiverOptions(options))).toContain(`is not an option: did you mean \`${meant}\`?`);
  });

  it('an alias pasted with a look-alike capital (the Kelvin sign K for K) is recognised: it lowercases to k', () => {
    expect(messageOf(() => validateReceiverOptions({ attestation: { ...attestation, '\u212Aeys': [] } }))).toBe(
      "createReceiver: `attestation['\u212Aeys']` is not an option: did you mean `attestation.jwks`?",
    );
  });
});

describe('"did you mean" never suggests a name 9 or more letters longer or shorter', () => {
  const spec = specOf('onUnfillableGapDecisionTimeoutMs', 'maxDeliveriesHeldPerStreamWhileWaiting');

  it('suggests a name 8 letters longer when those 8 are the only difference (a third of the shorter name)', () => {
    // 'Decision' left out: 24 letters against 32, 8 edits, and a third of 24 is 8.
    expect(messageOf(() => validateOptions({ onUnfillableGapTimeoutMs: 1 }, spec))).toBe(
      'createThing: `onUnfillableGapTimeoutMs` is not an option: did you mean `onUnfillableGapDecisionTimeoutMs`?',
    );
  });

  it('does not suggest a name 9 letters longer, even when a third of the shorter name would allow 9 edits', () => {
    // 'PerStream' left out: 29 letters against 38, 9 edits, and a third of 29 is 9.
    expect(messageOf(() => validateOptions({ maxDeliveriesHeldWhileWaiting: 1 }, spec))).toBe(
      'createThing: `maxDeliveriesHeldWhileWaiting` is not an option; the options are ' +
        'onUnfillableGapDecisionTimeoutMs, maxDeliveriesHeldPerStreamWhileWaiting.',
    );
  });
});

describe('"did you mean" counts two swapped neighbours as one edit, anywhere in the name', () => {
  it.each<[string, string]>([
    ['sotre', 'store'],
    ['tsore', 'store'],
    ['stoer', 'store'],
    ['lesaeMs', 'leaseMs'],
  ])('%s → %s', (typo, meant) => {
    expect(messageOf(() => validateReceiverOptions({ secrets, [typo]: 1 }))).toContain(`did you mean \`${meant}\`?`);
  });
});

describe('a bad number is named by its kind', () => {
  it.each<[number, string]>([
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [Number.NEGATIVE_INFINITY, '-Infinity'],
    [-5, 'a negative number'],
    [-0.5, 'a negative number'],
    [-0, 'zero'],
    [0, 'zero'],
    [Number.NaN, 'NaN'],
  ])('retainMs: %d is %s', (retainMs, kind) => {
    expect(messageOf(() => validateReceiverOptions({ secrets, retainMs }))).toBe(
      `createReceiver: \`retainMs\` must be a positive finite number of milliseconds, got ${kind}.`,
    );
  });
});

describe('listOf', () => {
  it('joins names as a sentence lists them', () => {
    expect([[], ['get'], ['get', 'set'], ['get', 'set', 'del']].map((names) => listOf(names))).toEqual([
      '',
      'get',
      'get and set',
      'get, set and del',
    ]);
    expect(listOf(['get', 'set', 'del'], 'or')).toBe('get, set or del');
  });
});
