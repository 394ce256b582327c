import { describe, expect, it } from 'vitest';
import { expectConfigInvalid } from '../test-kit.js';
import { optionRules } from './option-rules.js';
import { validateArgument, validateOptions } from './option-validation.js';
import { describeValue, suggestOption } from './option-words.js';
import { validateReceiverOptions } from './receiver-options.js';
import { createMemoryStore } from './store/memory-store.js';
import { streamOrdering } from './ordering/stream-ordering.js';

/** The message of the config_invalid error `run` throws (the test fails when it throws nothing else). */
const messageOf = (run: () => unknown): string => expectConfigInvalid(run).message;

// The rules behind the configuration messages that the table in config.test.ts does not pin down: which option a
// typo is taken for, how an option name that is not an identifier is shown, when cross-option rules speak, and the
// individual rules whose message is the user's fix.

const SECRET = 'whsec_TOP-SECRET-value-0123456789';
const secrets = { '3': SECRET };
const attestation = {
  issuer: 'https://kyb.example.com',
  audience: 'b2f7c3e0-0000-4000-8000-000000000000',
  jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json',
};

describe('"did you mean" takes two swapped letters for one typo', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['stroe', { secrets, stroe: createMemoryStore() }, 'store'],
    ['nwo', { secrets, nwo: Date.now }, 'now'],
    ['onw', { secrets, onw: Date.now }, 'now'],
    ['mdoe (inside ordering)', { secrets, ordering: { mdoe: 'detect' } }, 'ordering.mode'],
  ])('%s', (_name, options, meant) => {
    expect(messageOf(() => validateReceiverOptions(options))).toContain(`did you mean \`${meant}\`?`);
  });
});

describe('suggestOption: the closest known name, within a third of the shorter name', () => {
  it.each<[string, string[], string | undefined]>([
    // Three edits in a 13-letter name: a third of it is allowed.
    ['handlerTimout', ['leaseMs', 'handlerTimeoutMs'], 'handlerTimeoutMs'],
    ['storTimeotMs', ['storeTimeoutMs'], 'storeTimeoutMs'],
    // `lease` is two edits from `leaseMs`, but a third of the shorter name (5 letters) is one edit.
    ['lease', ['leaseMs'], undefined],
    // Swapped neighbours are one edit only when they are neighbours in both names.
    ['sotre', ['store'], 'store'],
    ['stoer', ['store'], 'store'],
    ['tsore', ['store'], 'store'],
    ['soter', ['store'], undefined],
    // Only a swap of the same two letters counts as one edit; one letter in the other's place is two.
    ['ab', ['ca'], undefined],
    ['ab', ['bc'], undefined],
    ['etsor', ['store'], undefined],
    ['abcdef', ['abcdxy', 'abcdex'], 'abcdex'],
    ['abcdef', ['abcdex', 'abcdxy'], 'abcdex'],
  ])('%s among %j → %s', (name, known, expected) => {
    expect(suggestOption(name, known)).toBe(expected);
  });
});

describe('an unknown option name is shown safely', () => {
  it('quotes a name that is not an identifier', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets, 'max body': 1 }))).toContain(
      "`['max body']` is not an option",
    );
  });

  it('escapes a backtick in a name, so the message keeps its quoting', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets, 'a`b': 1 }))).toContain("`['a\\`b']` is not an option");
  });

  it('shows a 64-character identifier as it is', () => {
    const name = 'x'.repeat(64);
    expect(messageOf(() => validateReceiverOptions({ secrets, [name]: 1 }))).toContain(`\`${name}\` is not an option`);
  });

  it('shows a 64-character name that is not an identifier whole, without an ellipsis', () => {
    const name = 'x-'.repeat(32);
    expect(messageOf(() => validateReceiverOptions({ secrets, [name]: 1 }))).toContain(
      `\`['${name}']\` is not an option`,
    );
  });

  it('keeps a quote inside a name escaped', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets, 'a"b': 1 }))).toContain("`['a\\\"b']` is not an option");
  });

  it('cuts a longer name to 64 characters', () => {
    const name = 'x'.repeat(65);
    const message = messageOf(() => validateReceiverOptions({ secrets, [name]: 1 }));
    expect(message).toContain(`\`['${'x'.repeat(64)}…']\` is not an option`);
    expect(message).not.toContain(name);
  });

  it('does not list internal options among the options', () => {
    const message = messageOf(() => validateReceiverOptions({ secrets, colour: 'blue' }));
    expect(message).toContain('the options are secrets');
    expect(message).not.toContain('crypto');
  });
});

describe('cross-option rules speak only once every option has the right kind', () => {
  it('reports a leaseMs of the wrong kind once, not also as shorter than the deadlines', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets, leaseMs: '60s' }))).toBe(
      'createReceiver: `leaseMs` must be a positive finite number of milliseconds, got a string.',
    );
  });

  it('a message that names its owner is not prefixed a second time', () => {
    expect(messageOf(() => validateReceiverOptions(undefined))).toMatch(/^createReceiver needs an options object/);
  });
});

describe('validateOptions and validateArgument for other factories', () => {
  const spec = {
    owner: 'createMyStore',
    example: 'createMyStore()',
    optional: true,
    options: { prefix: optionRules.nonEmptyString() },
  };

  it('checks options that are given, even when the options may be left out', () => {
    expect(messageOf(() => validateOptions({ prefx: 'kyb:' }, spec))).toContain(
      '`prefx` is not an option: did you mean `prefix`?',
    );
  });

  it('says how to fix a missing required argument', () => {
    const rule = optionRules.required(optionRules.receiver(), 'pass the receiver that createReceiver returns');
    expect(messageOf(() => validateArgument('kybWebhooks', 'receiver', undefined, rule))).toBe(
      'kybWebhooks: `receiver` is missing: pass the receiver that createReceiver returns',
    );
  });
});

describe('secrets: the message names the entry and the fix', () => {
  it.each<[string, unknown, string]>([
    [
      'a number as { secret }',
      { '2': { secret: 42 } },
      "`secrets['2'].secret` must be a string (the endpoint secret), got a number.",
    ],
    ['an empty { secret }', { '2': { secret: '' } }, "`secrets['2'].secret` is empty"],
  ])('%s', (_name, value, words) => {
    expect(messageOf(() => validateReceiverOptions({ secrets: value }))).toContain(words);
  });

  it('gives the version hint only for a bare string', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets: 42 }))).toBe(
      "createReceiver: `secrets` must be an object of secret versions, e.g. `secrets: { '3': process.env.KYB_SECRET_V3 }`; got a number.",
    );
  });

  it('says where the secret goes when a key is not a version', () => {
    expect(messageOf(() => validateReceiverOptions({ secrets: { 'not a version': SECRET } }))).toContain(
      "1 to 64 letters, digits, '.', '_' or '-', e.g. '3'. Put the secret in the value",
    );
  });

  it('names a version of up to 20 characters', () => {
    const version = 'v'.repeat(20);
    expect(messageOf(() => validateReceiverOptions({ secrets: { a: SECRET, [version]: '' } }))).toContain(
      `\`secrets['${version}']\` is empty`,
    );
  });

  it('names a longer key by its position only, in case it is a secret', () => {
    const version = 'v'.repeat(21);
    const message = messageOf(() => validateReceiverOptions({ secrets: { a: SECRET, [version]: '' } }));
    expect(message).toContain('`secrets[<the 2nd key>]` is empty');
    expect(message).not.toContain(version);
  });

  it.each<[number, string]>([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [4, '4th'],
    [10, '10th'],
    [11, '11th'],
    [12, '12th'],
    [13, '13th'],
    [21, '21st'],
    [22, '22nd'],
    [23, '23rd'],
  ])('names the position of key %i in English (the %s)', (position, ordinal) => {
    const keys = Array.from({ length: 23 }, (_, i) => (i + 1 === position ? `bad key ${i}` : `v${i}`));
    const message = messageOf(() =>
      validateReceiverOptions({ secrets: Object.fromEntries(keys.map((key) => [key, SECRET])) }),
    );
    expect(message).toContain(`has a key (the ${ordinal}, not shown)`);
  });
});

describe('attestation key source', () => {
  it('asks for a string or a URL when jwksUrl is neither', () => {
    expect(messageOf(() => validateReceiverOptions({ attestation: { ...attestation, jwksUrl: 42 } }))).toContain(
      '`attestation.jwksUrl` must be a string or a URL: use {base_url}/.well-known/kyb-jwks.json, an https: URL',
    );
  });

  it('refuses a loopback URL that is not http: or https:', () => {
    expect(
      messageOf(() => validateReceiverOptions({ attestation: { ...attestation, jwksUrl: 'ftp://127.0.0.1/jwks' } })),
    ).toContain('`attestation.jwksUrl` must be an https: URL');
  });

  it('refuses an inline key set without a keys array', () => {
    const { jwksUrl: _, ...rest } = attestation;
    expect(messageOf(() => validateReceiverOptions({ attestation: { ...rest, jwks: { keys: 'none' } } }))).toContain(
      '`attestation.jwks` must be a JSON Web Key Set',
    );
  });
});

describe('ordering', () => {
  it.each([0, 1] as const)('accepts firstSeq %i', (firstSeq) => {
    expect(() =>
      validateReceiverOptions({ secrets, ordering: streamOrdering({ mode: 'detect', firstSeq }) }),
    ).not.toThrow();
  });

  it('accepts detect with the default store, which keeps cursors', () => {
    expect(() => validateReceiverOptions({ secrets, ordering: streamOrdering({ mode: 'detect' }) })).not.toThrow();
  });

  it("refuses mode 'enforce' with a store that keeps no cursors", () => {
    const store = { claim() {}, complete() {}, release() {} };
    expect(
      messageOf(() =>
        validateReceiverOptions({
          secrets,
          store,
          ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [] }),
        }),
      ),
    ).toContain(
      "`store` keeps no stream cursors (getCursor, completeInOrder, advanceCursor), which ordering mode 'enforce' needs",
    );
  });

  it("says where fetchEventsAfter comes from when 'enforce' has none", () => {
    expect(
      messageOf(() => validateReceiverOptions({ secrets, ordering: streamOrdering({ mode: 'enforce' }) })),
    ).toContain("with a client from @kyb-webhooks/client (or use mode 'detect')");
  });

  it.each(['detect', 'enforce'] as const)(
    "refuses mode '%s' as a plain object, naming streamOrdering (the import that brings the engine)",
    (mode) => {
      const message = messageOf(() =>
        validateReceiverOptions({ secrets, ordering: { mode, fetchEventsAfter: () => [] } }),
      );
      expect(message).toContain(
        `\`ordering\` mode '${mode}' needs the ordering engine: pass ordering: streamOrdering({ mode: '${mode}', … }) ` +
          "(import { streamOrdering } from '@kyb-webhooks/core')",
      );
    },
  );

  it("accepts mode 'off' as a plain object: no engine is needed to do nothing", () => {
    expect(() => validateReceiverOptions({ secrets, ordering: { mode: 'off' } })).not.toThrow();
  });

  it('creates no ordered path for a plain object whose engine is not a function', () => {
    expect(
      messageOf(() => validateReceiverOptions({ secrets, ordering: { mode: 'detect', engine: 'createOrderedPath' } })),
    ).toContain('`ordering.engine` must be a function');
  });
});

describe('describeValue shows a kind, never content', () => {
  it('a symbol', () => {
    expect(describeValue(Symbol('secret'))).toBe('a symbol');
  });

  it('an object with no constructor', () => {
    expect(describeValue(Object.create(Object.create(Object.create(null) as object) as object))).toBe('an object');
  });

  it.each<[string, unknown]>([
    ['a name that is not a string', 42],
    ['a name with a space', 'Top Secret'],
    ['a name that starts with a digit', '1Password'],
    ['a name of 42 characters', 'N'.repeat(42)],
  ])('an instance whose constructor has %s', (_name, constructorName) => {
    const instance = Object.create({ constructor: { name: constructorName } }) as object;
    expect(describeValue(instance)).toBe('an object');
  });

  it('an instance whose constructor has a name of 41 characters', () => {
    const instance = Object.create({ constructor: { name: 'N'.repeat(41) } }) as object;
    expect(describeValue(instance)).toBe(`an instance of ${'N'.repeat(41)}`);
  });
});

describe('optionRules.secureUrl, optionRules.delayMs and optionRules.wholeTimerMs', () => {
  const spec = {
    owner: 'createThing',
    example: 'createThing({ url })',
    options: {
      url: optionRules.secureUrl("use the service's address", 'which would send the key in clear text'),
      waitMs: optionRules.delayMs(),
      pollMs: optionRules.wholeTimerMs(1),
    },
  };
  it.each<[unknown, string | undefined]>([
    ['https://api.kyb.example.com', undefined],
    ['http://127.0.0.1:3000', undefined],
    ['http://[::1]:3000', undefined],
    [
      'http://user:SECRET@api.kyb.example.com',
      '`url` uses http: on a host that is not loopback, which would send the key in clear text',
    ],
    ['https://user:SECRET@api.kyb.example.com', '`url` must not carry credentials (user:password@)'],
    ['https://SECRET@api.kyb.example.com', '`url` must not carry credentials (user:password@)'],
    ['http://:SECRET@127.0.0.1:3000', '`url` must not carry credentials (user:password@)'],
    ['ftp://api.kyb.example.com', '`url` must be an https: URL'],
    ['api.kyb.example.com', '`url` is not an absolute URL'],
    [42, '`url` must be a string or a URL'],
  ])('url %j', (url, problem) => {
    const run = () => validateOptions({ url }, spec);
    if (problem === undefined) expect(run).not.toThrow();
    else {
      const message = messageOf(run);
      expect(message).toContain(problem);
      expect(message).not.toContain('SECRET');
    }
  });
  it.each<[number, boolean]>([
    [0, true],
    [2_147_483_647, true],
    [2_147_483_648, false],
    [-1, false],
    [Number.NaN, false],
  ])('waitMs %d accepted: %s', (waitMs, accepted) => {
    const run = () => validateOptions({ waitMs }, spec);
    if (accepted) expect(run).not.toThrow();
    else expect(messageOf(run)).toContain('`waitMs` must be a number of milliseconds from 0 to 2147483647');
  });
  it.each<[number, boolean]>([
    [1, true],
    [2_147_483_647, true],
    [2_147_483_648, false],
    [0, false],
    [1.5, false],
    [Number.POSITIVE_INFINITY, false],
  ])('pollMs %d accepted: %s', (pollMs, accepted) => {
    const run = () => validateOptions({ pollMs }, spec);
    if (accepted) expect(run).not.toThrow();
    else expect(messageOf(run)).toContain('`pollMs` must be a whole number of milliseconds from 1 to 2147483647');
  });
});
