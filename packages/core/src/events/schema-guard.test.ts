import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestEvent, TEST_EVENT_TYPES, type TestEnvelope } from '../../test-kit.js';
import { envelopeSchema } from './envelope.js';
import { eventDataSchemas, priceLineSchema, timestampSchema, type KnownEventType } from './events.js';
import { KNOWN_EVENT_TYPES } from './event-types.js';
import { compileSchemaGuard, createValidator } from './schema-guard.js';

/*
 * The guard must say true exactly when zod accepts a value and hands it back unchanged. Every check below compares
 * the two paths on the same value; none of them states the expected answer by hand, so a drift in either one fails.
 */

/**
 * What the guard should answer: zod accepts and its output equals the input, prototypes, undefined properties and
 * own `__proto__` keys included, key order aside. (Node's check rather than toStrictEqual, which calls two objects
 * of different types when each has an own `constructor: NaN`.)
 */
function zodKeepsValue(schema: z.core.$ZodType, value: unknown): boolean {
  const parsed = z.safeParse(schema, value);
  return parsed.success && isDeepStrictEqual(parsed.data, value);
}

function guardOf(schema: z.core.$ZodType): (value: unknown) => boolean {
  const guard = compileSchemaGuard(schema);
  if (!guard) throw new Error('the schema did not compile to a guard');
  return guard;
}

/** Like JSON.parse on the wire: a `__proto__` key becomes an own property, not the prototype. */
function withOwnProto<T extends object>(value: T, proto: unknown): T {
  Object.defineProperty(value, '__proto__', { value: proto, enumerable: true, writable: true, configurable: true });
  return value;
}

const ULID = '01JH8ZK3M4N5P6Q7R8S9T0V1W2';
const DATA_TYPES = Object.keys(eventDataSchemas) as KnownEventType[];

function envelope(type: KnownEventType = 'kyb.data_request.pending_approval'): TestEnvelope {
  return createTestEvent(type, { event_id: ULID, stream_id: 'dr_01jh8zk3m4', seq: 3, timestamp: 1767225600 });
}

describe('compileSchemaGuard covers the webhook schemas', () => {
  it('compiles the envelope', () => {
    expect(compileSchemaGuard(envelopeSchema)).toBeTypeOf('function');
  });

  it.each(KNOWN_EVENT_TYPES)('compiles the data of %s', (type) => {
    expect(compileSchemaGuard(eventDataSchemas[type])).toBeTypeOf('function');
  });

  it('knows the same event types as the test kit', () => {
    expect([...DATA_TYPES].sort()).toEqual([...TEST_EVENT_TYPES].sort());
  });
});

describe('the guard agrees with zod on edge values', () => {
  function expectAgreement(schema: z.core.$ZodType, values: readonly unknown[]): void {
    const guard = guardOf(schema);
    const disagreements = values
      .map((value, index) => ({ index, value, guard: guard(value), zod: zodKeepsValue(schema, value) }))
      .filter((row) => row.guard !== row.zod);
    expect(disagreements).toEqual([]);
  }

  /** Both answers occur in a table, or it would not prove the guard can say either. */
  function expectBothAnswers(schema: z.core.$ZodType, values: readonly unknown[]): void {
    const answers = new Set(values.map((value) => z.safeParse(schema, value).success));
    expect(answers).toEqual(new Set([true, false]));
  }

  const numbers = [
    0,
    -0,
    1,
    -1,
    1.5,
    -1.5,
    0.1,
    NaN,
    Infinity,
    -Infinity,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 1,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER - 1,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    1e21,
    2 ** 53,
  ];
  const nonValues = [
    undefined,
    null,
    true,
    false,
    '',
    'x',
    '1',
    1n,
    Symbol('s'),
    [],
    [1],
    {},
    () => 1,
    new Date(0),
    new Map(),
  ];

  it.each([
    [
      'z.number().int().nonnegative().max(MAX_SAFE_INTEGER)',
      z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    ],
    ['z.number().nonnegative().finite()', z.number().nonnegative().finite()],
    ['z.number().int()', z.number().int()],
    ['z.int()', z.int()],
    ['z.number().gt(-1).lt(1)', z.number().gt(-1).lt(1)],
  ])('%s', (_, schema) => {
    const values = [...numbers, ...nonValues, '0', new Number(1)];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  const strings = [
    '',
    ' ',
    'a',
    'ab',
    'abc',
    '😀',
    'a😀',
    '😀😀',
    'a'.repeat(200),
    'a'.repeat(201),
    '😀'.repeat(100),
    '😀'.repeat(200),
    '😀'.repeat(201),
    'a'.repeat(199) + '😀',
    '\uD800',
    '\uDC00\uD800',
    '\uD800'.repeat(2),
    'é'.normalize('NFD'),
  ];

  it.each([
    ['z.string().min(1).max(200)', z.string().min(1).max(200)],
    ['z.string().min(2)', z.string().min(2)],
    ['z.string().max(2)', z.string().max(2)],
    ['z.string().min(1).max(500)', z.string().min(1).max(500)],
    ['z.string()', z.string()],
  ])('%s', (_, schema) => {
    const values = [...strings, ...nonValues, new String('a'), 5];
    expectAgreement(schema, values);
    if (schema.def.checks?.length) expectBothAnswers(schema, values);
  });

  it('ULID event ids (regex with the i flag)', () => {
    const values = [
      ULID,
      ULID.toLowerCase(),
      `8${ULID.slice(1)}`,
      `7${ULID.slice(1)}`,
      `${ULID.slice(0, 25)}U`,
      `${ULID.slice(0, 25)}I`,
      ULID.slice(0, 25),
      `${ULID}0`,
      ` ${ULID}`,
      `${ULID}\n`,
      '',
      0,
      null,
    ];
    expectBothAnswers(envelopeSchema.shape.event_id, values);
    expectAgreement(envelopeSchema.shape.event_id, values);
  });

  it('regexes with state (g and y flags) answer the same on every call', () => {
    const schema = z.string().regex(/^a+/g);
    const sticky = z.string().regex(/b/y);
    const values = ['a', 'aa', 'a', 'ba', 'b', 'b', 'ab'];
    expectAgreement(schema, values);
    expectAgreement(sticky, values);
    expectAgreement(schema, values);
  });

  it('z.custom: any truthy result accepts', () => {
    const schema = z.custom((value) => (typeof value === 'string' ? value : typeof value === 'number' ? value : {}));
    const values = ['', 'x', 0, -0, 1, NaN, null, undefined, false];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  it('loose objects: optional keys, extra keys, non-objects', () => {
    const schema = z.looseObject({ a: z.string().optional(), b: z.union([z.number(), z.string().optional()]) });
    const values = [
      {},
      { a: 'x' },
      { a: undefined },
      { a: 1 },
      { b: undefined },
      { b: 1 },
      { b: true },
      { c: 1 },
      { a: 'x', b: 'y', c: [null] },
      [],
      [1],
      ['x'],
      null,
      undefined,
      'x',
      1,
      Object.create(null),
      new Date(0),
      new Map(),
    ];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  it('timestamps inside data (union of number, digits, ISO date-time and date)', () => {
    const values = [
      ...numbers,
      ...nonValues,
      '1767225600',
      '1767225600123',
      '0',
      '0'.repeat(16),
      '1'.repeat(17),
      '-1',
      '1.5',
      ' 1',
      '١٢٣',
      '2026-12-01',
      '2026-02-28',
      '2026-02-29',
      '2024-02-29',
      '2000-02-29',
      '2100-02-29',
      '2026-02-30',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-1-01',
      '26-12-01',
      '2026-12-01T00:00:00Z',
      '2026-12-01T23:59:59.123456Z',
      '2026-12-01T00:00:00.123+02:00',
      '2026-12-01T00:00:00-23:59',
      '2026-12-01T00:00:00+24:00',
      '2026-12-01T00:00:00+0200',
      '2026-12-01T00:00:00',
      '2026-12-01T00:00',
      '2026-12-01T00:00Z',
      '2026-12-01T00:00+02:00',
      '2026-12-01T24:00:00Z',
      '2026-12-01T00:60:00Z',
      '2026-12-01T00:00:60Z',
      '2026-12-01 00:00:00Z',
      '2026-12-01T00:00:00.Z',
      '2026-12-01t00:00:00z',
      '2026-02-30T00:00:00Z',
      '2024-02-29T12:00:00Z',
      '2026-12-01T00:00:00Z ',
      new Date(0).toISOString(),
    ];
    expectBothAnswers(timestampSchema, values);
    expectAgreement(timestampSchema, values);
  });

  it('the envelope', () => {
    const base = envelope();
    const variants = (key: string, values: readonly unknown[]) => values.map((value) => ({ ...base, [key]: value }));
    const without = (key: string) => {
      const copy: Record<string, unknown> = { ...base };
      delete copy[key];
      return copy;
    };
    const values: unknown[] = [
      base,
      ...variants('event', [
        '',
        'a',
        'a'.repeat(200),
        'a'.repeat(201),
        '😀'.repeat(200),
        '😀'.repeat(201),
        5,
        null,
        undefined,
      ]),
      ...variants('event_id', [ULID.toLowerCase(), `8${ULID.slice(1)}`, ULID.slice(1), 1]),
      ...variants('stream_id', ['', 'x'.repeat(500), 'x'.repeat(501), ['dr_1']]),
      ...variants('seq', numbers),
      ...variants('seq', ['1', null, undefined, true]),
      ...variants('timestamp', numbers),
      ...variants('api_version', ['2026-01-01', '2026-02-30', '2026-1-01', '2026-01-01T00:00:00Z', '٢٠٢٦-٠١-٠١', '']),
      ...variants('data', [
        {},
        { anything: [1] },
        [],
        null,
        'x',
        1,
        undefined,
        new Date(0),
        new Map(),
        Object.create(null),
      ]),
      ...variants('attestation', [undefined, '', 'x', 5, null]),
      ...variants('extra', [undefined, null, 1, { nested: true }]),
      ...variants('constructor', ['x', null]),
      ...['event', 'event_id', 'stream_id', 'seq', 'timestamp', 'api_version', 'data', 'attestation'].map(without),
      JSON.parse(JSON.stringify(base)),
      null,
      undefined,
      [],
      [base],
      'envelope',
      42,
    ];
    expectBothAnswers(envelopeSchema, values);
    expectAgreement(envelopeSchema, values);
  });

  it('price lines and prices (pending approval data)', () => {
    const schema = eventDataSchemas['kyb.data_request.pending_approval'];
    const base = envelope().data;
    const line = { field: 'company_name', tier: 'basic', cents: 150 };
    const withLines = (lines: unknown) => ({ ...base, price: { quoted_cents: 150, currency: 'EUR', lines } });
    const values: unknown[] = [
      base,
      { ...base, price: undefined },
      { ...base, price: null },
      { ...base, price: [] },
      { ...base, request_id: undefined, offer_id: undefined },
      { ...base, request_id: 5 },
      { ...base, expires_at: undefined },
      { ...base, expires_at: '2026-02-30' },
      { ...base, expires_at: 1767225600 },
      withLines([]),
      withLines([line, line]),
      withLines([line, { field: 'x', tier: 'y' }]),
      withLines([line, { field: 'x', tier: 'y', cents: undefined }]),
      withLines([{ ...line, cents: 1.5 }]),
      withLines([{ ...line, cents: -150 }]),
      withLines([{ ...line, cents: '150' }]),
      withLines([{ ...line, extra: { deep: [1] } }]),
      withLines([null]),
      withLines([[line]]),
      withLines({ 0: line }),
      withLines(undefined),
      { ...withLines([line]), price: { quoted_cents: 1.5, currency: 'EUR', lines: [] } },
      { ...withLines([line]), price: { currency: 'EUR', lines: [] } },
    ];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
    expectAgreement(priceLineSchema, [line, { ...line, cents: undefined }, { field: 'x', tier: 'y' }, [], null]);
  });

  it('released data with charge and approval', () => {
    const schema = eventDataSchemas['kyb.data_request.released'];
    const base = envelope('kyb.data_request.released').data;
    const approval = { approved_at: '2026-12-01T00:00:00Z', action_id: 'act_1', threshold_met: true };
    const values: unknown[] = [
      base,
      { ...base, field_count: -1 },
      { ...base, field_count: 0 },
      { ...base, field_count: -0 },
      { ...base, field_count: 1.5 },
      { ...base, pii_included: 'true' },
      { ...base, pii_included: undefined },
      { ...base, charge: undefined },
      { ...base, charge: { charged_cents: 0, currency: 'EUR', lines: [] } },
      { ...base, charge: { charged_cents: 0, currency: 'EUR' } },
      { ...base, approval },
      { ...base, approval: { ...approval, approved_at: '2026-02-30T00:00:00Z' } },
      { ...base, approval: { ...approval, threshold_met: 1 } },
      { ...base, approval: { ...approval, action_id: undefined } },
      { ...base, approval: null },
    ];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  it('signed data with a record of verification details', () => {
    const schema = eventDataSchemas['kyb.signature_request.signed'];
    const base = envelope('kyb.signature_request.signed').data;
    const nullProto = Object.assign(Object.create(null) as object, { a: 1 });
    class Details {
      a = 1;
    }
    const values: unknown[] = [
      base,
      { ...base, verification: {} },
      { ...base, verification: { method: 'eip191', chain: [1, 2], nested: { deep: null } } },
      { ...base, verification: { undefined: undefined, '': '' } },
      { ...base, verification: [] },
      { ...base, verification: [['a', 1]] },
      { ...base, verification: null },
      { ...base, verification: 'ok' },
      { ...base, verification: undefined },
      { ...base, verification: new Date(0) },
      { ...base, verification: new Map([['a', 1]]) },
      { ...base, verification: new Details() },
      { ...base, verification: nullProto },
      { ...base, verification: { [Symbol('s')]: 1 } },
      { ...base, verification: Object.defineProperty({ a: 1 }, Symbol('hidden'), { value: 1, enumerable: false }) },
      { ...base, verification: Object.defineProperty({ a: 1 }, 'hidden', { value: 1, enumerable: false }) },
      { ...base, verification: { constructor: 'x' } },
      { ...base, verification: { constructor: { prototype: null } } },
      { ...base, verification: { '1': 1, '-1.5': 2 } },
      { ...base, signed_at: undefined },
    ];
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  it.each(DATA_TYPES)('the data of %s, type by type', (type) => {
    const schema = eventDataSchemas[type];
    const base = envelope(type).data;
    const values: unknown[] = [
      base,
      { ...base, extra: 1 },
      {},
      [],
      null,
      'data',
      [base],
      JSON.parse(JSON.stringify(base)),
    ];
    for (const key of Object.keys(schema.shape)) {
      for (const value of [undefined, null, '', 'x', 0, -1, 1.5, NaN, true, [], {}])
        values.push({ ...base, [key]: value });
      const copy: Record<string, unknown> = { ...base };
      delete copy[key];
      values.push(copy);
    }
    expectBothAnswers(schema, values);
    expectAgreement(schema, values);
  });

  it('says false, and zod returns a copy, where zod would not hand the value back as is', () => {
    const base = envelope();
    const fromJson = JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(base).slice(1)}`) as Record<
      string,
      unknown
    >;
    class Envelope {
      constructor(fields: object) {
        Object.assign(this, fields);
      }
    }
    const cases: [string, z.core.$ZodType, unknown][] = [
      ['an own __proto__ key from JSON.parse', envelopeSchema, fromJson],
      [
        'an own __proto__ key deep inside',
        eventDataSchemas['kyb.data_request.pending_approval'],
        { ...base.data, price: withOwnProto({ quoted_cents: 1, currency: 'EUR', lines: [] }, { x: 1 }) },
      ],
      [
        'an own __proto__ key in a record',
        eventDataSchemas['kyb.signature_request.signed'],
        { ...envelope('kyb.signature_request.signed').data, verification: withOwnProto({ a: 1 }, 1) },
      ],
      ['a class instance', envelopeSchema, new Envelope(base)],
      ['a null-prototype object', envelopeSchema, Object.assign(Object.create(null) as object, base)],
      ['fields inherited from a prototype', envelopeSchema, Object.create(base) as object],
      [
        'an array subclass',
        z.array(z.number()),
        Object.setPrototypeOf([1, 2], class extends Array {}.prototype) as unknown,
      ],
      // zod takes the first option that passes, and copies the value through it, though a later one keeps it whole
      [
        'a union whose first match copies',
        z.union([z.looseObject({ a: z.string() }), z.unknown()]),
        withOwnProto({ a: 'x' }, 1),
      ],
    ];
    for (const [label, schema, value] of cases) {
      const parsed = z.safeParse(schema, value);
      expect(parsed.success, label).toBe(true);
      expect(isDeepStrictEqual(parsed.data, value), label).toBe(false);
      expect(guardOf(schema)(value), label).toBe(false);
      const validated = createValidator(schema)(value);
      expect(validated.success && validated.data, label).not.toBe(value);
      expect(validated, label).toStrictEqual({ success: true, data: parsed.data });
    }
    // The dropped key is the point: zod's copy has no __proto__ of its own and a plain prototype.
    const copy = envelopeSchema.parse(fromJson);
    expect(Object.hasOwn(copy, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it("a __proto__ key inside an unknown value is zod's business too: it keeps it, and so does the guard", () => {
    const schema = eventDataSchemas['kyb.signature_request.signed'];
    const value = { ...envelope('kyb.signature_request.signed').data, verification: { proof: withOwnProto({}, 1) } };
    expect(guardOf(schema)(value)).toBe(zodKeepsValue(schema, value));
    expect(guardOf(schema)(value)).toBe(true);
  });
});

/** mulberry32: a tiny seeded generator, so a failure replays from its seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Opaque {
  field = 'x';
}

const BOUNDARY_VALUES: readonly (() => unknown)[] = [
  () => undefined,
  () => null,
  () => true,
  () => false,
  () => 0,
  () => -0,
  () => 1,
  () => -1,
  () => 1.5,
  () => NaN,
  () => Infinity,
  () => -Infinity,
  () => Number.MAX_SAFE_INTEGER,
  () => Number.MAX_SAFE_INTEGER + 1,
  () => Number.MAX_SAFE_INTEGER + 2,
  () => 1767225600,
  () => 1767225600123,
  () => 1e21,
  () => 2n,
  () => '',
  () => 'x',
  () => 'a'.repeat(200),
  () => 'a'.repeat(201),
  () => '😀'.repeat(200),
  () => '😀'.repeat(201),
  () => 'x'.repeat(501),
  () => '\uD800',
  () => ULID,
  () => ULID.toLowerCase(),
  () => `8${ULID.slice(1)}`,
  () => '2026-01-01',
  () => '2026-02-30',
  () => '2024-02-29',
  () => '2026-12-01T00:00:00Z',
  () => '2026-12-01T00:00',
  () => '2026-12-01T00:00:00+02:00',
  () => '2026-12-01T00:00Z',
  () => '2026-12-01T24:00:00Z',
  () => '1767225600',
  () => '12345678901234567',
  () => 'declined',
  () => [],
  () => [1, 'x'],
  () => ({}),
  () => ({ a: 1 }),
  () => ({ field: 'f', tier: 't', cents: 1 }),
  () => ({ field: 'f', tier: 't' }),
  () => ({ quoted_cents: 1, currency: 'EUR', lines: [] }),
  () => ({ charged_cents: 1, currency: 'EUR', lines: [{ field: 'f', tier: 't', cents: 1.5 }] }),
  () => ({ approved_at: 0, action_id: 'a', threshold_met: false }),
  () => withOwnProto({}, { polluted: true }),
  () => Object.create(null) as object,
  () => new Date(0),
  () => new Opaque(),
  () => Symbol('s'),
  () => () => 1,
];
const EXTRA_KEYS = [
  'extra',
  'request_id',
  'price',
  'lines',
  'cents',
  'attestation',
  'constructor',
  'toString',
  'hasOwnProperty',
  '0',
  '',
];

type Container = Record<string, unknown> | unknown[];

/** Every object and array inside `value`, with `value` first. */
function containers(value: unknown, found: Container[] = []): Container[] {
  if (typeof value === 'object' && value !== null) {
    found.push(value as Container);
    for (const key of Object.keys(value)) containers((value as Record<string, unknown>)[key], found);
  }
  return found;
}

/** One random edit somewhere in `root` (already a private copy): delete, retype, set a boundary value, add a key. */
function mutate(root: Container, random: () => number): void {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const target = pick(containers(root));
  const keys = Object.keys(target);
  const key = keys.length > 0 ? pick(keys) : '0';
  const record = target as Record<string, unknown>;
  const current = record[key];
  switch (Math.floor(random() * 6)) {
    case 0:
      if (Array.isArray(target)) target.splice(Number(key), 1);
      else delete record[key];
      break;
    case 1: // swap the type for a near one
      record[key] =
        typeof current === 'number'
          ? String(current)
          : typeof current === 'string'
            ? current === ''
              ? 0
              : /^\d+$/.test(current)
                ? Number(current)
                : current.length
            : Array.isArray(current)
              ? Object.assign({}, current)
              : typeof current === 'object' && current !== null
                ? Object.values(current)
                : typeof current === 'boolean'
                  ? String(current)
                  : {};
      break;
    case 2:
    case 3:
      record[key] = pick(BOUNDARY_VALUES)();
      break;
    case 4: {
      const extra = pick(EXTRA_KEYS);
      if (Array.isArray(target)) target.push(pick(BOUNDARY_VALUES)());
      else
        Object.defineProperty(target, extra, {
          value: pick(BOUNDARY_VALUES)(),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      break;
    }
    default: // nudge a string or number at its edges
      record[key] =
        typeof current === 'string'
          ? pick([
              current.toLowerCase(),
              current.toUpperCase(),
              `${current}x`,
              current.slice(1),
              current.slice(0, -1),
              ` ${current}`,
            ])
          : typeof current === 'number'
            ? pick([current + 0.5, -current, current * 1e10, current - 1, Math.trunc(current)])
            : undefined;
  }
}

describe('the guard agrees with zod on mutated fixtures', () => {
  const PER_TYPE = 3000;

  it.each(TEST_EVENT_TYPES.map((type, index) => [type, 0x5eed + index] as const))('%s (seed %i)', (type, seed) => {
    const random = mulberry32(seed);
    const envelopeGuard = guardOf(envelopeSchema);
    const dataSchema = eventDataSchemas[type];
    const dataGuard = guardOf(dataSchema);
    const tally = { envelope: [0, 0], data: [0, 0] };
    const disagreements: { iteration: number; schema: string; guard: boolean; zod: boolean; value: unknown }[] = [];
    const compare = (
      schema: z.core.$ZodType,
      guard: (value: unknown) => boolean,
      name: 'envelope' | 'data',
      value: unknown,
      iteration: number,
    ) => {
      const byGuard = guard(value);
      const byZod = zodKeepsValue(schema, value);
      tally[name][byZod ? 1 : 0]!++;
      if (byGuard !== byZod && disagreements.length < 5)
        disagreements.push({ iteration, schema: name, guard: byGuard, zod: byZod, value });
    };
    for (let iteration = 0; iteration < PER_TYPE; iteration++) {
      const value = structuredClone(envelope(type)) as unknown as Record<string, unknown>;
      const edits = 1 + Math.floor(random() * 3);
      for (let edit = 0; edit < edits; edit++) mutate(value, random);
      compare(envelopeSchema, envelopeGuard, 'envelope', value, iteration);
      compare(dataSchema, dataGuard, 'data', value.data, iteration);
    }
    expect(disagreements).toEqual([]);
    // The fuzz only proves something if both answers come up often.
    for (const [accepted, rejected] of [tally.envelope, tally.data] as [number, number][]) {
      expect(rejected).toBeGreaterThan(PER_TYPE * 0.1);
      expect(accepted).toBeGreaterThan(PER_TYPE * 0.1);
    }
  });
});

describe('schemas the guard does not compile', () => {
  const recursive: z.core.$ZodType = z.looseObject({
    get children() {
      return z.array(recursive);
    },
  });
  const cases: [string, z.core.$ZodType, unknown[]][] = [
    ['transform', z.string().transform((s) => s.length), ['abc', 5]],
    ['strip object', z.object({ a: z.string() }), [{ a: 'x', b: 1 }, { b: 1 }]],
    ['strict object', z.strictObject({ a: z.string() }), [{ a: 'x' }, { a: 'x', b: 1 }]],
    ['refine', z.string().refine((s) => s.startsWith('a')), ['abc', 'xyz']],
    ['default', z.string().default('fallback'), [undefined, 'x', 1]],
    ['default in a loose object', z.looseObject({ a: z.string().default('fallback') }), [{}, { a: 'x' }]],
    ['pipe', z.string().pipe(z.coerce.number()), ['12', 'x']],
    ['catch', z.number().catch(0), [1, 'x']],
    ['trim', z.string().trim(), [' a ', 'a']],
    ['coerce', z.coerce.number(), ['12', 12]],
    ['e-mail format', z.email(), ['a@example.com', 'a']],
    [
      'custom string format named like a supported one',
      z.stringFormat('date', (s) => s === 'today'),
      ['today', '2026-01-01'],
    ],
    ['nullable', z.string().nullable(), [null, 'x', 1]],
    ['exact optional', z.looseObject({ a: z.exactOptional(z.string()) }), [{}, { a: undefined }]],
    ['xor', z.xor([z.string(), z.string().min(1)]), ['a', '']],
    [
      'discriminated union',
      z.discriminatedUnion('k', [z.looseObject({ k: z.literal('a') })]),
      [{ k: 'a' }, { k: 'b' }],
    ],
    ['typed catchall', z.looseObject({}).catchall(z.string()), [{ a: 'x' }, { a: 1 }]],
    ['array length', z.array(z.string()).min(1), [['a'], []]],
    ['enum-keyed record', z.record(z.enum(['a', 'b']), z.string()), [{ a: 'x', b: 'y' }, { a: 'x' }]],
    ['a shape key on Object.prototype', z.looseObject({ constructor: z.unknown() }), [{}, { constructor: 1 }]],
    ['recursion', recursive, [{ children: [{ children: [] }] }, { children: [1] }]],
    [
      'an unsupported field deep inside',
      z.looseObject({ ...envelopeSchema.shape, seq: z.coerce.number() }),
      [{ ...envelope(), seq: '3' }, envelope()],
    ],
  ];

  it.each(cases)('%s compiles to undefined, and createValidator answers like zod', (_, schema, values) => {
    expect(compileSchemaGuard(schema)).toBeUndefined();
    const validate = createValidator(schema);
    for (const value of values) {
      const parsed = z.safeParse(schema, value);
      const validated = validate(value);
      if (parsed.success) expect(validated).toStrictEqual({ success: true, data: parsed.data });
      else expect(validated).toStrictEqual({ success: false, issues: parsed.error.issues });
    }
  });

  it("createValidator returns zod's output, not the input, for a schema that changes it", () => {
    const validate = createValidator(z.object({ a: z.string() }));
    const input = { a: 'x', b: 1 };
    expect(validate(input)).toStrictEqual({ success: true, data: { a: 'x' } });
  });
});

describe('createValidator', () => {
  it('returns the input itself when the guard accepts it', () => {
    const validate = createValidator(envelopeSchema);
    const value = envelope();
    const result = validate(value);
    expect(result.success).toBe(true);
    expect(result.success && result.data).toBe(value);
  });

  it("returns zod's issues when the value is invalid", () => {
    const validate = createValidator(envelopeSchema);
    const value = { ...envelope(), seq: 1.5, event_id: 'nope' };
    const result = validate(value);
    expect(result).toStrictEqual({ success: false, issues: envelopeSchema.safeParse(value).error?.issues });
    expect(result.success || result.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['event_id', 'seq']);
  });

  it('leaves an async refinement to zod, which refuses to run it synchronously', () => {
    const schema = z.looseObject({ a: z.custom<string>(async () => true) });
    expect(guardOf(schema)({ a: 'x' })).toBe(false);
    expect(() => schema.safeParse({ a: 'x' })).toThrow(/synchronous/);
    expect(() => createValidator(schema)({ a: 'x' })).toThrow(/synchronous/);
  });
});
