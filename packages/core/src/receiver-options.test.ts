import { describe, expect, it } from 'vitest';
import { optionRules } from './option-rules.js';
import { validateArgument, validateOptions } from './option-validation.js';
import { describeValue, suggestOption } from './option-words.js';
import { validateReceiverOptions } from './receiver-options.js';
import { KybWebhookError } from './errors.js';
import { createMemoryStore } from './store/memory-store.js';
import { createReceiver } from './receiver.js';

/** The error `run` throws; fails the test when it does not throw. */
function thrown(run: () => unknown): KybWebhookError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KybWebhookError);
    return error as KybWebhookError;
  }
  throw new Error('expected a config_invalid error, nothing was thrown');
}

const SECRET = 'whsec_TOP-SECRET-value-0123456789';
const jwksUrl = 'https://api.kyb.example.com/.well-known/kyb-jwks.json';
const attestation = { issuer: 'https://kyb.example.com', audience: 'b2f7c3e0-0000-4000-8000-000000000000', jwksUrl };
const store = createMemoryStore();
const unset = process.env.KYB_TEST_SURELY_UNSET_VARIABLE;

// [case, options, words the message must contain]
const invalidReceiverOptions: Array<[string, unknown, string[]]> = [
  [
    'no options at all (createReceiver())',
    undefined,
    ['createReceiver needs an options object', 'e.g. createReceiver({', 'got undefined'],
  ],
  ['null options', null, ['needs an options object', 'got null']],
  ['an array as options', [], ['needs an options object', 'got an array']],
  ['neither secrets nor attestation', {}, ['`secrets` and `attestation` are both missing', 'forged']],
  ['secrets: {} alone', { secrets: {} }, ['`secrets` is empty', 'add a version', 'remove `secrets`']],
  ['secrets: {} next to attestation', { secrets: {}, attestation }, ['`secrets` is empty', 'HMAC check off']],
  [
    'a secret read from an unset environment variable',
    { secrets: { '3': unset } },
    ["`secrets['3']` is undefined", 'environment variable', 'unset'],
  ],
  ['an empty secret', { secrets: { '3': '' } }, ["`secrets['3']` is empty", 'environment variable']],
  ['a blank secret', { secrets: { '3': '  \n' } }, ["`secrets['3']` is blank"]],
  [
    'a secret read from a file with its newline',
    { secrets: { '3': `${SECRET}\n` } },
    ["`secrets['3']` has leading or trailing whitespace", 'secrets file', 'trim()'],
  ],
  [
    'a secret pasted with a space, inside { secret }',
    { secrets: { '2': { secret: ` ${SECRET}`, notAfter: Date.now() } } },
    ["`secrets['2'].secret` has leading or trailing whitespace"],
  ],
  ['a null secret', { secrets: { '3': null } }, ["`secrets['3']` is null"]],
  [
    'a number as secret',
    { secrets: { '3': 42 } },
    ["`secrets['3']` must be the secret (a string) or { secret, notAfter }", 'got a number'],
  ],
  [
    'an unset secret inside { secret }',
    { secrets: { '2': { secret: unset, notAfter: Date.now() } } },
    ["`secrets['2'].secret` is missing", 'unset'],
  ],
  [
    "notAfter: '24h'",
    { secrets: { '2': { secret: SECRET, notAfter: '24h' }, '3': SECRET } },
    ["`secrets['2'].notAfter` is a string", 'never end', 'Date.now() + 24 * 3600_000'],
  ],
  [
    'notAfter: NaN',
    { secrets: { '2': { secret: SECRET, notAfter: Number.NaN } } },
    ["`secrets['2'].notAfter` is NaN", 'never end'],
  ],
  [
    'notAfter: Infinity',
    { secrets: { '2': { secret: SECRET, notAfter: Number.POSITIVE_INFINITY } } },
    ["`secrets['2'].notAfter` is Infinity"],
  ],
  [
    'notAfter: an Invalid Date',
    { secrets: { '2': { secret: SECRET, notAfter: new Date('24h') } } },
    ["`secrets['2'].notAfter` is an Invalid Date", 'never end'],
  ],
  [
    'notAfter: a boolean',
    { secrets: { '2': { secret: SECRET, notAfter: true } } },
    ["`secrets['2'].notAfter` must be a Date or Unix milliseconds", 'got a boolean'],
  ],
  [
    'a misspelt notAfter',
    { secrets: { '2': { secret: SECRET, expiresAt: Date.now() } } },
    ["`secrets['2'].expiresAt` is not an option", "did you mean `secrets['2'].notAfter`?"],
  ],
  [
    'a version key that is not a kv',
    { secrets: { 'v 3': SECRET } },
    ['`secrets` has a key (the 1st, not shown) that is not a secret version'],
  ],
  [
    'secrets as a bare string',
    { secrets: SECRET },
    ['`secrets` must be an object of secret versions', 'needs its version as the key', 'got a string'],
  ],
  [
    'unknown option maxBodySize',
    { secrets: { '3': SECRET }, maxBodySize: 1024 },
    ['`maxBodySize` is not an option', 'did you mean `maxBodyBytes`?'],
  ],
  [
    'unknown option bodyLimit',
    { secrets: { '3': SECRET }, bodyLimit: 1024 },
    ['`bodyLimit` is not an option', 'did you mean `maxBodyBytes`?'],
  ],
  [
    'unknown option attestations',
    { attestations: attestation },
    ['`attestations` is not an option', 'did you mean `attestation`?'],
  ],
  [
    'unknown option tolerance',
    { secrets: { '3': SECRET }, tolerance: 300 },
    ['`tolerance` is not an option', 'did you mean `toleranceSeconds`?'],
  ],
  [
    'unknown option leeway',
    { attestation, leeway: 30 },
    ['`leeway` is not an option', 'did you mean `attestation.leewaySeconds`?'],
  ],
  ['unknown option secret', { secret: SECRET }, ['`secret` is not an option', 'did you mean `secrets`?']],
  [
    'a snake_case option',
    { secrets: { '3': SECRET }, max_body_bytes: 1024 },
    ['`max_body_bytes` is not an option', 'did you mean `maxBodyBytes`?'],
  ],
  ['a typo in an option', { secrets: { '3': SECRET }, retainMS: 1 }, ['did you mean `retainMs`?']],
  [
    'an unrelated option',
    { secrets: { '3': SECRET }, colour: 'blue' },
    ['`colour` is not an option; the options are secrets, attestation, store'],
  ],
  [
    'maxBodyBytes: 0',
    { secrets: { '3': SECRET }, maxBodyBytes: 0 },
    ['`maxBodyBytes` must be a positive finite number of bytes, got zero'],
  ],
  [
    'maxBodyBytes as a string',
    { secrets: { '3': SECRET }, maxBodyBytes: '1mb' },
    ['`maxBodyBytes` must be a positive finite number', 'got a string'],
  ],
  [
    'toleranceSeconds: NaN',
    { secrets: { '3': SECRET }, toleranceSeconds: Number.NaN },
    ['`toleranceSeconds` must be a positive finite number', 'got NaN'],
  ],
  [
    'leaseMs: -1',
    { secrets: { '3': SECRET }, leaseMs: -1 },
    ['`leaseMs` must be a positive finite number', 'got a negative number'],
  ],
  [
    'retainMs: Infinity',
    { secrets: { '3': SECRET }, retainMs: Number.POSITIVE_INFINITY },
    ['`retainMs` must be a positive finite number', 'got Infinity'],
  ],
  // MySQL's DATETIME ends in 9999: 8,000 years failed on every completion (or, without strict mode, was stored expired).
  [
    'retainMs past 100 years',
    { secrets: { '3': SECRET }, retainMs: 2.6e14 },
    ['`retainMs` must be at most 3155760000000 ms (100 years), the longest every store can keep'],
  ],
  [
    'leaseMs past 100 years',
    { secrets: { '3': SECRET }, leaseMs: 1e300 },
    ['`leaseMs` must be at most 3155760000000 ms (100 years)'],
  ],
  [
    'handlerTimeoutMs: 0',
    { secrets: { '3': SECRET }, handlerTimeoutMs: 0 },
    ['`handlerTimeoutMs` must be a positive finite number'],
  ],
  [
    'storeTimeoutMs past what a timer keeps',
    { secrets: { '3': SECRET }, storeTimeoutMs: 30 * 86_400_000 },
    ['`storeTimeoutMs` must be at most 2147483647 ms', 'the longest delay a timer keeps'],
  ],
  [
    'storeTimeoutMs as a string',
    { secrets: { '3': SECRET }, storeTimeoutMs: '5s' },
    ['`storeTimeoutMs` must be a positive finite number'],
  ],
  [
    'a lease shorter than the default deadlines',
    { secrets: { '3': SECRET }, leaseMs: 30_000 },
    [
      '`leaseMs` (30000 ms) must be longer than handlerTimeoutMs + 2 × storeTimeoutMs (30000 + 2 × 5000 ms)',
      'raise leaseMs or lower the timeouts',
    ],
  ],
  [
    'timeouts that fill the lease',
    { secrets: { '3': SECRET }, leaseMs: 10_000, handlerTimeoutMs: 8_000, storeTimeoutMs: 1_000 },
    ['`leaseMs` (10000 ms) must be longer than', '8000 + 2 × 1000'],
  ],
  [
    'a store without complete',
    { secrets: { '3': SECRET }, store: { claim() {}, release() {} } },
    ['`store` has no complete method', 'claim, complete and release'],
  ],
  [
    'a store that is a Promise',
    { secrets: { '3': SECRET }, store: Promise.resolve(store) },
    ['`store` must be an object with claim, complete and release methods', 'a Promise (missing await?)'],
  ],
  ['now that is not a function', { secrets: { '3': SECRET }, now: 1_700_000_000_000 }, ['`now` must be a function']],
  [
    'logger that is console',
    { secrets: { '3': SECRET }, logger: console },
    ['`logger` must be a function', 'got an instance of'],
  ],
  ['attestation that is a string', { attestation: jwksUrl }, ['`attestation` must be an object', 'got a string']],
  [
    'attestation without issuer',
    { attestation: { ...attestation, issuer: unset } },
    ['`attestation.issuer` is missing', '{attestation_issuer}'],
  ],
  [
    'attestation with an empty audience',
    { attestation: { ...attestation, audience: '' } },
    ['`attestation.audience` is empty', 'client domain UUID'],
  ],
  [
    'attestation without jwksUrl or jwks',
    { attestation: { issuer: attestation.issuer, audience: attestation.audience } },
    ['`attestation.jwksUrl` is missing', '`attestation.jwks`'],
  ],
  [
    'attestation with both jwksUrl and jwks',
    { attestation: { ...attestation, jwks: { keys: [] } } },
    ['`attestation.jwksUrl` and `attestation.jwks` are both set', 'keep one'],
  ],
  [
    'a plain-http jwksUrl',
    { attestation: { ...attestation, jwksUrl: 'http://api.kyb.example.com/jwks' } },
    ['`attestation.jwksUrl` uses http: on a host that is not loopback'],
  ],
  [
    'a relative jwksUrl',
    { attestation: { ...attestation, jwksUrl: '/.well-known/kyb-jwks.json' } },
    ['`attestation.jwksUrl` is not an absolute URL'],
  ],
  [
    'an ftp jwksUrl',
    { attestation: { ...attestation, jwksUrl: 'ftp://kyb.example.com/jwks' } },
    ['`attestation.jwksUrl` must be an https: URL'],
  ],
  [
    'jwks without keys',
    { attestation: { issuer: 'i', audience: 'a', jwks: [] } },
    ['`attestation.jwks` must be a JSON Web Key Set'],
  ],
  [
    'leewaySeconds: 120',
    { attestation: { ...attestation, leewaySeconds: 120 } },
    ['`attestation.leewaySeconds` must be a number of seconds from 0 to 60'],
  ],
  [
    'leewaySeconds: NaN',
    { attestation: { ...attestation, leewaySeconds: Number.NaN } },
    ['`attestation.leewaySeconds` must be a number', 'got NaN'],
  ],
  [
    'jwksTimeoutMs: 0',
    { attestation: { ...attestation, jwksTimeoutMs: 0 } },
    ['`attestation.jwksTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647', 'got zero'],
  ],
  [
    'jwksTimeoutMs past what a timer keeps',
    { attestation: { ...attestation, jwksTimeoutMs: 2_147_483_648 } },
    ['`attestation.jwksTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647', 'the longest delay'],
  ],
  [
    'jwksMaxBytes: -1',
    { attestation: { ...attestation, jwksMaxBytes: -1 } },
    ['`attestation.jwksMaxBytes` must be a whole number of bytes of at least 1'],
  ],
  [
    'jwksCooldownMs: 1.5',
    { attestation: { ...attestation, jwksCooldownMs: 1.5 } },
    ['`attestation.jwksCooldownMs` must be a whole number', 'got a fraction'],
  ],
  [
    'jwksMaxStaleMs: NaN',
    { attestation: { ...attestation, jwksMaxStaleMs: Number.NaN } },
    ['`attestation.jwksMaxStaleMs` must be a whole number of milliseconds of at least 0', 'got NaN'],
  ],
  [
    'fetch that is not a function',
    { attestation: { ...attestation, fetch: {} } },
    ['`attestation.fetch` must be a function'],
  ],
  [
    'jwks_uri inside attestation',
    { attestation: { issuer: 'i', audience: 'a', jwks_uri: jwksUrl } },
    ['`attestation.jwks_uri` is not an option', 'did you mean `attestation.jwksUrl`?'],
  ],
  [
    'leeway inside attestation',
    { attestation: { ...attestation, leeway: 10 } },
    ['`attestation.leeway` is not an option', 'did you mean `attestation.leewaySeconds`?'],
  ],
  [
    'issuer at the top level',
    { secrets: { '3': SECRET }, issuer: 'x' },
    ['`issuer` is not an option', 'did you mean `attestation.issuer`?'],
  ],
];

describe('validateReceiverOptions refuses every invalid configuration with config_invalid', () => {
  it.each(invalidReceiverOptions)('%s', (_name, options, words) => {
    const error = thrown(() => validateReceiverOptions(options));
    expect(error.code).toBe('config_invalid');
    expect(error.message.startsWith('createReceiver')).toBe(true);
    for (const word of words) expect(error.message).toContain(word);
  });
});

describe('createReceiver refuses every invalid configuration at creation with config_invalid', () => {
  it.each(invalidReceiverOptions)('%s', (_name, options, words) => {
    const error = thrown(() => createReceiver(options as never));
    expect(error.code).toBe('config_invalid');
    for (const word of words) expect(error.message).toContain(word);
  });
});

describe('configuration messages never show a secret', () => {
  it.each<[string, unknown]>([
    ['a secret as a version key', { secrets: { [SECRET]: '' } }],
    ['a secret as a version key of a version object', { secrets: { [SECRET]: { secret: 'x', notAfter: 'soon' } } }],
    ['a secret as a version key with a bad character', { secrets: { [`${SECRET}+/=`]: 'x' } }],
    ['a secret where secrets belong', { secrets: SECRET }],
    ['a secret as notAfter', { secrets: { '2': { secret: 'x', notAfter: SECRET } } }],
    ['a secret as maxBodyBytes', { secrets: { '3': 'x' }, maxBodyBytes: SECRET }],
    ['a secret in attestation.audience of the wrong type', { attestation: { ...attestation, audience: [SECRET] } }],
    [
      'credentials in a plain-http jwksUrl',
      { attestation: { ...attestation, jwksUrl: `http://user:${SECRET}@kyb.example.com/jwks` } },
    ],
  ])('%s', (_name, options) => {
    const error = thrown(() => validateReceiverOptions(options));
    expect(error.code).toBe('config_invalid');
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain('TOP-SECRET');
  });
});

describe('validateReceiverOptions accepts valid configurations', () => {
  it.each<[string, Record<string, unknown>]>([
    ['one secret', { secrets: { '3': SECRET } }],
    [
      'a rotation with a Date notAfter',
      { secrets: { '2': { secret: SECRET, notAfter: new Date('2030-01-01T00:00:00Z') }, '3': SECRET } },
    ],
    ['a rotation with a Unix-ms notAfter', { secrets: { '2': { secret: SECRET, notAfter: Date.now() + 86_400_000 } } }],
    ['a version without notAfter', { secrets: { '2': { secret: SECRET } } }],
    ['attestation only, by URL', { attestation }],
    ['attestation by a URL object', { attestation: { ...attestation, jwksUrl: new URL(jwksUrl) } }],
    ['attestation with an inline JWKS', { attestation: { issuer: 'i', audience: 'a', jwks: { keys: [] } } }],
    ['attestation on loopback http', { attestation: { ...attestation, jwksUrl: 'http://127.0.0.1:8080/jwks' } }],
    ['attestation on localhost http', { attestation: { ...attestation, jwksUrl: 'http://localhost:8080/jwks' } }],
    ['attestation on [::1] http', { attestation: { ...attestation, jwksUrl: 'http://[::1]:8080/jwks' } }],
    [
      'every attestation option',
      {
        attestation: {
          ...attestation,
          leewaySeconds: 0,
          jwksCooldownMs: 0,
          jwksCacheMaxAgeMs: 1,
          jwksTimeoutMs: 1,
          jwksMaxStaleMs: 1,
          jwksMaxBytes: 1,
          fetch,
        },
      },
    ],
    [
      'both, with every option',
      {
        secrets: { '3': SECRET },
        attestation,
        store,
        toleranceSeconds: 300,
        maxBodyBytes: 1024,
        leaseMs: 60_000,
        retainMs: 1,
        handlerTimeoutMs: 1_000,
        storeTimeoutMs: 1_000,
        now: Date.now,
        logger: () => {},
        crypto: {},
      },
    ],
    [
      'a short lease with short timeouts',
      { secrets: { '3': SECRET }, leaseMs: 1_000, handlerTimeoutMs: 500, storeTimeoutMs: 200 },
    ],
    [
      'options explicitly undefined',
      { secrets: { '3': SECRET }, attestation: undefined, store: undefined, logger: undefined },
    ],
    ['a prototype-less object', Object.assign(Object.create(null) as object, { secrets: { '3': SECRET } })],
  ])('%s', (_name, options) => {
    expect(() => validateReceiverOptions(options)).not.toThrow();
  });

  it('lets createReceiver build a working receiver from valid options', async () => {
    const receiver = createReceiver({
      secrets: { '3': SECRET },
      leaseMs: 1_000,
      handlerTimeoutMs: 500,
      storeTimeoutMs: 200,
    });
    const result = await receiver.receive({ method: 'GET', headers: {}, body: '' });
    expect(result.status).toBe(405);
  });
});

describe('validateOptions (for adapters, stores and custom stores)', () => {
  const spec = {
    owner: 'createMyStore',
    example: 'createMyStore({ client })',
    options: {
      client: optionRules.required(
        optionRules.methods(['get', 'set'], 'pass a connected client'),
        'pass a connected client.',
      ),
      prefix: optionRules.nonEmptyString('e.g. "kyb:"'),
      maxEntries: optionRules.positiveInteger(),
      strict: optionRules.boolean(),
      table: optionRules.parsedBy((name: string) => {
        if (!/^\w+$/.test(name)) throw new KybWebhookError('config_invalid', 'a table name is letters, digits and _.');
      }),
    },
    aliases: { keyPrefix: 'prefix' },
  };
  const client = { get() {}, set() {} };

  it.each<[string, unknown, string[]]>([
    ['a required option missing', {}, ['createMyStore: `client` is missing: pass a connected client.']],
    ['an object without a method', { client: { get() {} } }, ['`client` has no set method: pass a connected client.']],
    ['an object without two methods', { client: {} }, ['`client` has no get or set methods']],
    ['an empty string', { client, prefix: '' }, ['`prefix` is empty: e.g. "kyb:".']],
    [
      'a fraction where a count belongs',
      { client, maxEntries: 1.5 },
      ['`maxEntries` must be a positive whole number, got a fraction.'],
    ],
    ['a string where a boolean belongs', { client, strict: 'yes' }, ['`strict` must be true or false, got a string.']],
    [
      'a value its parser refuses',
      { client, table: 'a b' },
      ['`table` is invalid: a table name is letters, digits and _.'],
    ],
    ['an alias', { client, keyPrefix: 'x' }, ['`keyPrefix` is not an option: did you mean `prefix`?']],
    [
      'options that are a class instance',
      new Map(),
      ['createMyStore needs an options object, e.g. createMyStore({ client }); got an instance of Map.'],
    ],
  ])('%s', (_name, options, words) => {
    const error = thrown(() => validateOptions(options, spec));
    expect(error.code).toBe('config_invalid');
    for (const word of words) expect(error.message).toContain(word);
  });

  it('lists every problem at once, one per line', () => {
    const error = thrown(() => validateOptions({ prefix: '', maxEntries: 0 }, spec));
    expect(error.message).toBe(
      'createMyStore: 3 configuration problems:\n' +
        '  - `prefix` is empty: e.g. "kyb:".\n' +
        '  - `maxEntries` must be a positive whole number, got zero.\n' +
        '  - `client` is missing: pass a connected client.',
    );
  });

  it('accepts undefined options only when the spec says they are optional', () => {
    expect(() => validateOptions(undefined, { ...spec, options: {}, optional: true })).not.toThrow();
    expect(thrown(() => validateOptions(undefined, { ...spec, options: {} })).code).toBe('config_invalid');
  });

  it('accepts valid options, class instances as clients included', () => {
    class Client {
      get(): void {}
      set(): void {}
    }
    expect(() =>
      validateOptions({ client: new Client(), prefix: 'kyb:', maxEntries: 10, strict: false, table: 'events' }, spec),
    ).not.toThrow();
  });

  it('checks a positional argument with validateArgument', () => {
    expect(thrown(() => validateArgument('kybWebhooks', 'receiver', undefined, optionRules.receiver())).message).toBe(
      'kybWebhooks: `receiver` is missing.',
    );
    expect(() =>
      validateArgument('kybWebhooks', 'receiver', createReceiver({ secrets: { '3': SECRET } }), optionRules.receiver()),
    ).not.toThrow();
  });

  it.each<[string, unknown, string]>([
    ['receiver options', { secrets: { '3': SECRET } }, 'looks like receiver options, not a receiver'],
    ['the createReceiver function', createReceiver, 'is a function, not a receiver'],
    ['an object', { receive() {} }, 'is not a receiver (it needs receive, reject and maxBodyBytes)'],
    ['null', null, 'is not a receiver'],
  ])('refuses %s as a receiver', (_name, value, words) => {
    const error = thrown(() => validateArgument('kybWebhooks', 'receiver', value, optionRules.receiver()));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain(words);
    expect(error.message).toContain('createReceiver(');
  });
});

describe('suggestOption', () => {
  it.each<[string, string[], Record<string, string>, string | undefined]>([
    ['pth', ['path', 'onResult'], {}, 'path'],
    ['onResults', ['path', 'onResult'], {}, 'onResult'],
    ['ONRESULT', ['path', 'onResult'], {}, 'onResult'],
    ['on_result', ['path', 'onResult'], {}, 'onResult'],
    ['mxaEntries', ['maxEntries'], {}, 'maxEntries'],
    ['now', ['store'], {}, undefined],
    ['x', ['path'], {}, undefined],
    ['bodyLimit', ['maxBodyBytes'], { bodyLimit: 'maxBodyBytes' }, 'maxBodyBytes'],
    ['body_limit', ['maxBodyBytes'], { bodyLimit: 'maxBodyBytes' }, 'maxBodyBytes'],
  ])('%s among %j → %s', (name, known, aliases, expected) => {
    expect(suggestOption(name, known, aliases)).toBe(expected);
  });
});

describe('describeValue', () => {
  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
    ['a blank string', ' '],
    ['a string', SECRET],
    ['NaN', Number.NaN],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['zero', 0],
    ['a negative number', -3],
    ['a fraction', 1.5],
    ['a number', 7],
    ['a boolean', true],
    ['a bigint', 10n],
    ['a function', () => {}],
    ['an array', []],
    ['an Invalid Date', new Date(Number.NaN)],
    ['a Date', new Date(0)],
    ['a Promise (missing await?)', Promise.resolve()],
    ['an object', {}],
    ['an instance of URL', new URL('https://example.com')],
  ])('%s', (expected, value) => {
    expect(describeValue(value)).toBe(expected);
  });
});

describe('createMemoryStore refuses a bad configuration at creation', () => {
  it.each<[string, unknown, string[]]>([
    ['null options', null, ['createMemoryStore needs an options object', 'got null']],
    ['maxEntries: 0', { maxEntries: 0 }, ['`maxEntries` must be a positive whole number, got zero']],
    ['maxEntries: 1.5', { maxEntries: 1.5 }, ['`maxEntries` must be a positive whole number, got a fraction']],
    ['maxEntries: NaN', { maxEntries: Number.NaN }, ['`maxEntries` must be a positive whole number, got NaN']],
    ['maxEntries as a string', { maxEntries: '1000' }, ['`maxEntries` must be a positive whole number, got a string']],
    ['now that is a number', { now: 0 }, ['`now` must be a function']],
    ['max instead of maxEntries', { max: 10 }, ['`max` is not an option: did you mean `maxEntries`?']],
    ['a misspelt maxEntries', { maxEntires: 10 }, ['did you mean `maxEntries`?']],
  ])('%s', (_name, options, words) => {
    const error = thrown(() => createMemoryStore(options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message.startsWith('createMemoryStore')).toBe(true);
    for (const word of words) expect(error.message).toContain(word);
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['empty options', {}],
    ['every option', { maxEntries: 10, now: () => 0 }],
  ])('accepts %s', async (_name, options) => {
    const memory = createMemoryStore(options as never);
    expect((await memory.claim('A', { leaseMs: 1_000 })).status).toBe('acquired');
  });
});
