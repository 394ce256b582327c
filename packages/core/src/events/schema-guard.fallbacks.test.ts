import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileSchemaGuard, createValidator } from './schema-guard.js';

// The guard is a fast path in front of zod: it may only say "accepted as it is" when zod would accept the value and
// hand it back unchanged. These cases cover the schema kinds whose checks the guard must not skip (and so must leave
// to zod), and the values a compiled guard must refuse, beside the ones in schema-guard.test.ts.

/** What the guard should answer: zod accepts and its output equals the input. */
function zodKeepsValue(schema: z.ZodType, value: unknown): boolean {
  const parsed = schema.safeParse(value);
  return parsed.success && isDeepStrictEqual(parsed.data, value);
}

/** Like JSON.parse on the wire: a `__proto__` key becomes an own property, not the prototype. */
function withOwnProto<T extends object>(value: T): T {
  Object.defineProperty(value, '__proto__', { value: {}, enumerable: true, writable: true, configurable: true });
  return value;
}

describe('schemas with a check the guard cannot run compile to undefined, and createValidator answers like zod', () => {
  const cases: [string, z.ZodType, unknown[]][] = [
    [
      'a catchall of unknown values with a refinement',
      z.looseObject({}).catchall(z.unknown().refine(() => false)),
      [{}, { a: 1 }],
    ],
    ['includes at a position', z.string().includes('x', { position: 2 }), ['abx', 'xab']],
    ['a 32-bit integer', z.int32(), [1, 2 ** 40]],
    ['a number that must be a multiple', z.number().multipleOf(2), [4, 3]],
    [
      'a custom check with a refinement',
      z.custom<string>((v) => typeof v === 'string').refine((v) => v.length > 3),
      ['abcd', 'ab'],
    ],
    [
      'an optional field of a type the guard does not know',
      z.looseObject({ a: z.date().optional() }),
      [{}, { a: new Date(0) }, { a: 1 }],
    ],
    ['a union with an option the guard does not know', z.union([z.string(), z.date()]), ['a', new Date(0), 1]],
    ['a record of values the guard does not know', z.record(z.string(), z.date()), [{ a: new Date(0) }, { a: 1 }]],
    // A check with its own `when` (a def built with zod's check classes, or z.custom's `when` parameter) runs only
    // when that says so; the guard would run it on every value.
    [
      'a minimum length that applies only when a condition holds',
      z.string().check(new z.core.$ZodCheckMinLength({ check: 'min_length', minimum: 3, when: () => false })),
      ['a', 'abcd', 1],
    ],
    [
      'a maximum length that applies only when a condition holds',
      z.string().check(new z.core.$ZodCheckMaxLength({ check: 'max_length', maximum: 1, when: () => false })),
      ['a', 'abcd', 1],
    ],
    [
      'a lower bound that applies only when a condition holds',
      z
        .number()
        .check(
          new z.core.$ZodCheckGreaterThan({ check: 'greater_than', value: 5, inclusive: true, when: () => false }),
        ),
      [1, 6],
    ],
    [
      'an upper bound that applies only when a condition holds',
      z
        .number()
        .check(new z.core.$ZodCheckLessThan({ check: 'less_than', value: 5, inclusive: false, when: () => false })),
      [1, 6],
    ],
    [
      'a custom check that applies only when a condition holds',
      z.custom((value) => value === 'x', { when: () => false }),
      ['x', 'y'],
    ],
    // Bounds that are not numbers compare by coercion: the plan, written down as data, takes numbers only.
    ['a number with a bigint lower bound', z.number().check(z.gte(5n as unknown as number)), [4, 6]],
    ['a number with a bigint upper bound', z.number().check(z.lte(5n as unknown as number)), [4, 6]],
    // zod checks a symbol key of the shape like any other; the guard only knows string keys.
    [
      'a loose object with a symbol key in its shape',
      z.looseObject({ [Symbol.for('kyb.test')]: z.string() }),
      [{}, { [Symbol.for('kyb.test')]: 'x' }, { [Symbol.for('kyb.test')]: 1 }],
    ],
    ['a record with number keys', z.record(z.number(), z.string()), [{ 1: 'x' }, { a: 'x' }, { 1: 2 }]],
    [
      'a loose record (keys its key type refuses pass)',
      z.looseRecord(z.string().regex(/^a/), z.number()),
      [{ a: 1 }, { b: 'x' }],
    ],
    [
      'a map (its def has a key type and a value type, like a record)',
      z.map(z.string(), z.number()),
      [new Map([['a', 1]]), { a: 1 }],
    ],
  ];

  it.each(cases)('%s', (_, schema, values) => {
    expect(compileSchemaGuard(schema)).toBeUndefined();
    const validate = createValidator(schema);
    for (const value of values) {
      const parsed = schema.safeParse(value);
      const validated = validate(value);
      if (parsed.success) expect(validated).toStrictEqual({ success: true, data: parsed.data });
      else expect(validated).toStrictEqual({ success: false, issues: parsed.error.issues });
    }
  });
});

describe('a compiled guard refuses what zod refuses or would copy', () => {
  const cases: [string, z.ZodType, unknown[]][] = [
    ['a number: not a number, NaN, Infinity', z.number(), [1, '1', Number.NaN, Number.POSITIVE_INFINITY]],
    ['lt: the bound itself', z.number().lt(5), [4, 5]],
    ['lte: past the bound', z.number().lte(5), [5, 6]],
    ['a record with a value of the wrong type', z.record(z.string(), z.number()), [{ a: 1 }, { a: 'x' }]],
    [
      'a record of objects that zod copies',
      z.record(z.string(), z.looseObject({ a: z.number() })),
      [{ x: { a: 1 } }, { x: withOwnProto({ a: 1 }) }],
    ],
    [
      'an array of objects that zod copies',
      z.array(z.looseObject({ a: z.number() })),
      [[{ a: 1 }], [withOwnProto({ a: 1 })]],
    ],
    [
      'a required field: absent, or present and undefined',
      z.looseObject({ a: z.string() }),
      [{ a: 'x' }, {}, { a: undefined }],
    ],
    [
      'an optional field: absent, undefined, or of the wrong type',
      z.looseObject({ a: z.string().optional() }),
      [{}, { a: undefined }, { a: 1 }],
    ],
    [
      'a field of unknown values: absent or undefined',
      z.looseObject({ a: z.unknown() }),
      [{}, { a: undefined }, { a: null }],
    ],
  ];

  it.each(cases)('%s', (_, schema, values) => {
    const guard = compileSchemaGuard(schema);
    expect(guard).toBeDefined();
    expect(values.map((value) => guard!(value))).toEqual(values.map((value) => zodKeepsValue(schema, value)));
  });
});

describe('something that is not a zod schema has no guard', () => {
  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a plain object', {}],
    ['an object with an empty _zod', { _zod: {} }],
  ])('compileSchemaGuard(%s) answers undefined instead of throwing', (_what, notASchema) => {
    expect(compileSchemaGuard(notASchema as z.ZodType)).toBeUndefined();
  });
});
