// A record plan accepts only what zod's `util.isPlainObject` calls plain: an object whose constructor, if it has a
// function there at all, has a prototype object of its own with `isPrototypeOf` (as Object's has). Values from
// JSON.parse always pass; objects built in code (class instances, odd `constructor` properties) must get zod's answer.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileSchemaGuard, createValidator } from './schema-guard.js';

function withConstructor(ctor: unknown): Record<string, unknown> {
  return { a: 1, constructor: ctor };
}

function functionWithPrototype(prototype: unknown): () => void {
  const f = function () {};
  Object.defineProperty(f, 'prototype', { value: prototype });
  return f;
}

class Point {
  x = 1;
}

const nullPrototype = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });

const cases: [string, unknown][] = [
  ['a plain object', { a: 1 }],
  ['an object with an own constructor that is not a function', withConstructor(5)],
  ['an object with an own constructor that is undefined', withConstructor(undefined)],
  ['an object without prototype (no constructor at all)', nullPrototype],
  ['an object whose constructor is a plain function', withConstructor(function () {})],
  ['an object whose constructor is an arrow function (no prototype)', withConstructor(() => 1)],
  ['an object whose constructor has a null prototype', withConstructor(functionWithPrototype(null))],
  ['an object whose constructor has an array as prototype', withConstructor(functionWithPrototype([]))],
  ['an object whose constructor has a string as prototype', withConstructor(functionWithPrototype('proto'))],
  ['an object whose constructor is Object', withConstructor(Object)],
  ['a class instance', new Point()],
];

describe.each([['z.record(z.string(), z.unknown())', z.record(z.string(), z.unknown())]])(
  '%s on objects built in code',
  (_, schema) => {
    const guard = compileSchemaGuard(schema)!;
    const validate = createValidator(schema);

    it.each(cases)('%s: the guard says true only when zod accepts it unchanged', (_what, value) => {
      const parsed = schema.safeParse(value);
      expect(guard(value)).toBe(parsed.success && isDeepStrictEqual(parsed.data, value));
    });

    it.each(cases)('%s: createValidator answers as zod does', (_what, value) => {
      const parsed = schema.safeParse(value);
      const validated = validate(value);
      expect(validated.success).toBe(parsed.success);
      if (parsed.success && validated.success) expect(validated.data).toStrictEqual(parsed.data);
    });

    it('zod refuses every object whose constructor is a function without a plain prototype, and accepts the others', () => {
      const accepted = cases.filter(([, value]) => schema.safeParse(value).success).map(([what]) => what);
      expect(accepted).toEqual([
        'a plain object',
        'an object with an own constructor that is not a function',
        'an object with an own constructor that is undefined',
        'an object without prototype (no constructor at all)',
        'an object whose constructor is Object',
      ]);
    });
  },
);
