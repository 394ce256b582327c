import { transformSync } from 'esbuild';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as planRuntime from '../src/events/schema-plan.js';
import { compilePlan, type PlanNode, type SchemaPlan } from '../src/events/schema-plan.js';
import { PlanWriter } from './plan-code.js';
import { PLAN_EDGES, planValues } from './plan-values.js';

/**
 * The function PlanWriter writes for a plan, transpiled and evaluated with schema-plan.ts's helpers in scope (and not
 * predicates.ts's, which it writes in place).
 */
function written(plan: SchemaPlan): PlanNode {
  const writer = new PlanWriter();
  const name = writer.functionOf(plan);
  const { code } = transformSync(`${writer.declarations()}\nreturn ${name};`, { loader: 'ts' });
  // The test evaluates the code the generator writes, as the generated module would run it.
  return new Function(...Object.keys(planRuntime), code)(...Object.values(planRuntime)) as PlanNode;
}

const KEYS = ['a', 'b', 'with-dash', '__proto__', 'constructor', '0'];
const stringChecks = fc.array(
  fc.oneof(
    fc.record({ min: fc.nat(3) }),
    fc.record({ max: fc.nat(3) }),
    fc.constantFrom({ pattern: '^a+$', flags: '' }, { pattern: 'B', flags: 'i' }, { pattern: 'a', flags: 'g' }),
  ),
  { maxLength: 2 },
);
const numberChecks = fc.array(
  fc.oneof(
    fc.record({ gte: fc.integer({ min: -2, max: 2 }) }),
    fc.record({ gt: fc.integer({ min: -2, max: 2 }) }),
    fc.record({ lte: fc.integer({ min: -2, max: 2 }) }),
    fc.record({ lt: fc.integer({ min: -2, max: 2 }) }),
    fc.constant({ safeint: true as const }),
  ),
  { maxLength: 2 },
);

/** Plans of every kind, nested, with fields that may or may not be absent whatever their own answer for undefined. */
const plans: fc.Arbitrary<SchemaPlan> = fc.letrec<{ plan: SchemaPlan }>((tie) => ({
  plan: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('string' as const), checks: stringChecks }),
    fc.record({ kind: fc.constant('number' as const), checks: numberChecks }),
    fc.constant({ kind: 'boolean' as const }),
    fc.constant({ kind: 'unknown' as const }),
    fc.constant({ kind: 'custom' as const, predicate: 'isDataObject' as const }),
    fc.record({ kind: fc.constant('optional' as const), inner: tie('plan') }),
    fc.record({
      kind: fc.constant('object' as const),
      fields: fc.uniqueArray(
        fc.record({ key: fc.constantFrom(...KEYS), plan: tie('plan'), mayBeAbsent: fc.boolean() }),
        {
          selector: (field) => field.key,
          maxLength: 3,
        },
      ),
    }),
    fc.record({ kind: fc.constant('array' as const), element: tie('plan') }),
    fc.record({ kind: fc.constant('union' as const), options: fc.array(tie('plan'), { minLength: 1, maxLength: 3 }) }),
    fc.record({
      kind: fc.constant('record' as const),
      key: fc.record({ kind: fc.constant('string' as const), checks: stringChecks }),
      value: tie('plan'),
    }),
  ),
})).plan;

describe('PlanWriter', () => {
  it('writes, for any plan, a function that answers for every value as compilePlan does', () => {
    fc.assert(
      fc.property(
        plans.chain((plan) =>
          fc.tuple(fc.constant(plan), fc.array(planValues(plan), { minLength: 20, maxLength: 20 })),
        ),
        ([plan, values]) => {
          const generated = written(plan);
          const compiled = compilePlan(plan);
          for (const value of [...PLAN_EDGES, ...values]) expect(generated(value)).toBe(compiled(value));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes one function for plans that are equal, and keeps one pattern constant per pattern', () => {
    const writer = new PlanWriter();
    const date: SchemaPlan = { kind: 'string', checks: [{ pattern: '^\\d{4}$', flags: '' }] };
    const first = writer.functionOf({ kind: 'array', element: date });
    const second = writer.functionOf({ kind: 'array', element: date });
    writer.functionOf({ kind: 'union', options: [date, { kind: 'number', checks: [] }] });
    expect(second).toBe(first);
    expect(writer.declarations().match(/new RegExp/g)).toHaveLength(1);
  });

  it('keeps no DEFER bookkeeping for a field whose plan cannot defer (a union of a string and a number)', () => {
    const timestamp: SchemaPlan = {
      kind: 'union',
      options: [
        { kind: 'number', checks: [] },
        { kind: 'string', checks: [{ pattern: '^\\d+$', flags: '' }] },
      ],
    };
    const list: SchemaPlan = { kind: 'array', element: { kind: 'object', fields: [] } };
    const writer = new PlanWriter();
    writer.functionOf({
      kind: 'object',
      fields: [
        { key: 'at', plan: timestamp, mayBeAbsent: false },
        { key: 'lines', plan: list, mayBeAbsent: false },
      ],
    });
    const code = writer.declarations();
    expect(code).toMatch(/if \(v\d+\(item\) === REJECT\) return REJECT;/);
    // The list (an array of objects) may need zod's copy: the array remembers its items' DEFER, the object the list's.
    expect(code.match(/verdict = DEFER;/g)).toHaveLength(2);
  });

  it('imports only the helpers its functions call, and writes the object checks and short bounds in place', () => {
    const writer = new PlanWriter();
    writer.functionOf({
      kind: 'object',
      fields: [
        { key: 'data', plan: { kind: 'custom', predicate: 'isDataObject' }, mayBeAbsent: false },
        { key: 'id', plan: { kind: 'string', checks: [{ min: 1 }, { max: 500 }] }, mayBeAbsent: false },
      ],
    });
    expect(writer.imports()).toEqual({ helpers: ['hasMaxCodePoints'] });
    expect(writer.declarations()).not.toMatch(/isDataObject|copiesUnchanged|hasMinCodePoints/);
    expect(writer.declarations()).toContain('(item.length <= 500 || hasMaxCodePoints(item, 500))');
  });

  it('refuses a custom check given as a function, which has no name to write', () => {
    expect(() => new PlanWriter().functionOf({ kind: 'custom', predicate: () => true })).toThrow(/no name/);
  });
});
