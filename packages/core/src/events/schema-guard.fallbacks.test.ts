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
