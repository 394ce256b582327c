/**
 * Values to compare two answers for a schema plan over (the generated functions and `compilePlan`, in the tests of
 * plan-code.ts and schema-plans.generated.ts): mostly values the plan accepts, so that whole objects get through, with
 * a wrong value, a missing key or an odd prototype at times.
 */
import fc from 'fast-check';
import type { SchemaPlan } from '../src/events/schema-plan.js';

/** An array with another prototype: zod copies it into a plain one. */
export class ItemList extends Array<unknown> {}

/** Values that sit on the edges zod's checks draw: types, bounds, prototypes, code points. */
export const PLAN_EDGES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  '\uD83D\uDE00',
  '\uD800',
  '2026-02-29',
  '2028-02-29',
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00+02:00',
  '1700000000',
  '01ARZ3NDEKTSV4RRFFQ69G5FAV',
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  2 ** 53 - 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  {},
  Object.create(null),
  JSON.parse('{"__proto__": {}}'),
  new Date(0),
  Object.setPrototypeOf([1], ItemList.prototype),
];

const anyValue: fc.Arbitrary<unknown> = fc.oneof(fc.constantFrom(...PLAN_EDGES), fc.anything());

/** Values shaped by a plan: mostly what it accepts, with a wrong value, a missing key or an odd prototype at times. */
export function planValues(plan: SchemaPlan): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 15, arbitrary: shapedBy(plan) }, { weight: 1, arbitrary: anyValue });
}

function shapedBy(plan: SchemaPlan): fc.Arbitrary<unknown> {
  switch (plan.kind) {
    case 'string': {
      // fast-check cannot generate from an /i pattern: the pattern without it, then some strings lower-cased.
      const matching = (pattern: string, flags: string) =>
        fc
          .tuple(fc.stringMatching(new RegExp(pattern, flags.replace('i', ''))), fc.boolean())
          .map(([text, lower]) => (lower && flags.includes('i') ? text.toLowerCase() : text));
      const patterns = plan.checks.flatMap((check) =>
        'pattern' in check ? [matching(check.pattern, check.flags)] : [],
      );
      // Lengths on each side of a min or max, in units and in code points; and values a regex test would coerce to a
      // matching string (a one-item array, a number), which only a type test tells apart.
      const lengths = plan.checks.flatMap((check) =>
        'min' in check ? [check.min] : 'max' in check ? [check.max] : [],
      );
      const edges = lengths.flatMap((n) =>
        [n - 1, n, n + 1].filter((k) => k >= 0).flatMap((k) => ['x'.repeat(k), '\uD83D\uDE00'.repeat(k)]),
      );
      const coercible = patterns.map((arbitrary) => arbitrary.map((text) => [text]));
      // A match with a character before or after it: only a pattern's anchors refuse it.
      const affixed = patterns.map((arbitrary) =>
        fc
          .tuple(arbitrary, fc.constantFrom(' ', '\u0000', '~'), fc.boolean())
          .map(([text, extra, before]) => (before ? extra + text : text + extra)),
      );
      return fc.oneof(
        ...patterns.map((arbitrary) => ({ weight: 8, arbitrary })),
        ...affixed.map((arbitrary) => ({ weight: 2, arbitrary })),
        ...coercible.map((arbitrary) => ({ weight: 1, arbitrary })),
        ...(edges.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...edges) }] : []),
        { weight: 4, arbitrary: fc.string({ maxLength: 3 }) },
        { weight: 1, arbitrary: fc.oneof(fc.nat(), fc.string({ unit: 'binary', maxLength: 600 })) },
      );
    }
    case 'number': {
      // Each bound itself and its neighbours, where `>=` and `>` part.
      const bounds = plan.checks.flatMap((check) => Object.values(check).filter((v) => typeof v === 'number'));
      const edges = [0, ...bounds.flatMap((n) => [n - 1, n, n + 1])];
      return fc.oneof(
        { weight: 4, arbitrary: fc.nat() },
        { weight: 2, arbitrary: fc.constantFrom(...edges) },
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger(),
        { weight: 1, arbitrary: fc.nat().map(String) },
      );
    }
    case 'boolean':
      return fc.boolean();
    case 'unknown':
      return anyValue;
    case 'custom':
      return fc.oneof(fc.object(), fc.constantFrom(null, [], 'data'));
    case 'optional':
      return fc.oneof(fc.constant(undefined), planValues(plan.inner));
    case 'array':
      return fc
        .tuple(fc.array(planValues(plan.element), { maxLength: 4 }), fc.constantFrom('plain', 'plain', 'subclass'))
        .map(([items, shape]) => (shape === 'subclass' ? Object.setPrototypeOf(items, ItemList.prototype) : items));
    case 'union':
      return fc.oneof(...plan.options.map(planValues));
    case 'record':
      return fc.dictionary(fc.string(), planValues(plan.value), { maxKeys: 3 });
    case 'object':
      return objectsOf(plan.fields);
  }
}

function objectsOf(fields: readonly { key: string; plan: SchemaPlan }[]): fc.Arbitrary<unknown> {
  const entry = (field: { key: string; plan: SchemaPlan }) =>
    fc.oneof(
      { weight: 20, arbitrary: planValues(field.plan).map((value) => [[field.key, value]] as [string, unknown][]) },
      { weight: 1, arbitrary: fc.constant([] as [string, unknown][]) }, // the key absent
    );
  return fc
    .tuple(
      fc.tuple(...fields.map(entry)),
      fc.constantFrom('plain', 'plain', 'plain', 'plain', 'null-prototype', 'own __proto__', 'extra key'),
    )
    .map(([entries, shape]) => {
      const record: Record<string, unknown> = shape === 'null-prototype' ? Object.create(null) : {};
      for (const [key, value] of entries.flat()) record[key] = value;
      if (shape === 'own __proto__') Object.defineProperty(record, '__proto__', { value: {}, enumerable: true });
      if (shape === 'extra key') record.added_by_the_service = 1;
      return record;
    });
}
