import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PLAN_EDGES, planValues } from '../../scripts/plan-values.js';
import { SCHEMA_PLANS_MODULE, schemaPlansSource, webhookSchemaPlans } from '../../scripts/schema-plans-source.js';
import { eventDataSchemas } from './events.js';
import { KNOWN_EVENT_TYPES } from './event-types.js';
import { ACCEPT, compilePlan, DEFER, REJECT, type PlanNode, type SchemaPlan } from './schema-plan.js';
import { envelopeSchema } from './envelope.js';
import { createTestEvent } from '../../test-kit.js';
import { answerListVerdict, DATA_VERDICTS, envelopeVerdict } from './schema-plans.generated.js';

// The receiver accepts valid deliveries by these functions without loading zod, so they must answer as the zod
// schemas' own plans do (and those plans as zod does: schema-guard's tests).
const REGENERATE = 'out of date: run `npm run generate:schema-plans` in packages/core';

function expectSameVerdicts(generated: PlanNode, plan: SchemaPlan): void {
  const compiled = compilePlan(plan);
  for (const value of PLAN_EDGES) expect(generated(value)).toBe(compiled(value));
  fc.assert(
    fc.property(planValues(plan), (value) => generated(value) === compiled(value)),
    { numRuns: 1000 },
  );
}

/** An array of another class, which zod copies into a plain array. */
class OtherArray extends Array<unknown> {}

/**
 * Copies of `value`, one per object or array inside it (itself included), where that one part needs zod's copy: an
 * object with an own `__proto__` key (as JSON.parse makes), an array of another class. Each comes with its path.
 */
function withEachPartNeedingACopy(value: unknown, path = 'data'): [string, unknown][] {
  if (typeof value !== 'object' || value === null) return [];
  const changedHere: unknown = Array.isArray(value)
    ? Object.setPrototypeOf([...value], OtherArray.prototype)
    : Object.defineProperty({ ...value }, '__proto__', { value: {}, enumerable: true });
  const inner = Object.entries(value).flatMap(([key, part]) =>
    withEachPartNeedingACopy(part, `${path}.${key}`).map(([innerPath, changedPart]): [string, unknown] => [
      innerPath,
      Array.isArray(value)
        ? value.map((item, index) => (String(index) === key ? changedPart : item))
        : { ...value, [key]: changedPart },
    ]),
  );
  return [[path, changedHere], ...inner];
}

/** Copies of `value` with one of its parts (at any depth, not itself) replaced by `replacement`, each with its path. */
function withEachPartReplaced(value: unknown, replacement: unknown, path = 'data'): [string, unknown][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, part]) => {
    const put = (changedPart: unknown): unknown =>
      Array.isArray(value)
        ? value.map((item, index) => (String(index) === key ? changedPart : item))
        : { ...value, [key]: changedPart };
    return [
      [`${path}.${key}`, put(replacement)] as [string, unknown],
      ...withEachPartReplaced(part, replacement, `${path}.${key}`).map(([innerPath, changed]): [string, unknown] => [
        innerPath,
        put(changed),
      ]),
    ];
  });
}

describe('schema-plans.generated.ts', () => {
  // Under mutation testing (stryker.config.mjs sets KYB_MUTATE_TARGET) the module on disk is Stryker's instrumented
  // copy, never the generator's text; the tests below still hold its functions to compilePlan.
  it.skipIf(process.env['KYB_MUTATE_TARGET'] !== undefined)(
    'is what the generator writes from the zod schemas today',
    async () => {
      expect(readFileSync(SCHEMA_PLANS_MODULE, 'utf8'), REGENERATE).toBe(await schemaPlansSource());
    },
  );

  it('holds a verdict for every event type and no other', () => {
    expect(Object.keys(DATA_VERDICTS).sort(), REGENERATE).toEqual(Object.keys(eventDataSchemas).sort());
    expect([...KNOWN_EVENT_TYPES].sort()).toEqual(Object.keys(eventDataSchemas).sort());
  });

  const plans = webhookSchemaPlans();

  it('answers for an envelope as the compiled plan of envelopeSchema does', () => {
    expectSameVerdicts(envelopeVerdict, plans.envelope);
  });

  // Random envelopes rarely get every other field right at once, which an unanchored pattern needs to show.
  it.each([
    ['event', ' kyb.business.wallet_address_changed'],
    ['event', 'kyb.business.wallet_address_changed '],
    ['api_version', ' 2026-01-01'],
    ['api_version', '2026-01-01 '],
    ['event_id', '01J0000000000000000000000000'],
    ['event_id', ' 01J00000000000000000000000'],
  ])('refuses an otherwise valid envelope whose %s is %j, as zod does', (field, value) => {
    const valid = {
      event: 'kyb.business.wallet_address_changed',
      event_id: '01J00000000000000000000000',
      stream_id: 'biz_1',
      seq: 1,
      timestamp: 1_700_000_000,
      api_version: '2026-01-01',
      data: {},
    };
    expect(envelopeVerdict(valid)).toBe(ACCEPT);
    expect(envelopeSchema.safeParse(valid).success).toBe(true);
    const changed = { ...valid, [field]: value };
    expect(envelopeVerdict(changed)).toBe(REJECT);
    expect(envelopeSchema.safeParse(changed).success).toBe(false);
  });

  it.each(KNOWN_EVENT_TYPES)('answers for the data of %s as its compiled plan does', (type) => {
    expectSameVerdicts(DATA_VERDICTS[type], plans.data[type]!);
  });

  // Random data rarely gets a whole object right around the one part that needs zod's copy; the test kit's events do.
  it.each(KNOWN_EVENT_TYPES)(
    'answers ACCEPT for valid %s data, and DEFER (zod copies it) wherever one of its parts needs the copy',
    (type) => {
      const data = createTestEvent(type).data as Record<string, unknown>;
      const compiled = compilePlan(plans.data[type]!);
      expect(DATA_VERDICTS[type](data)).toBe(ACCEPT);
      expect(compiled(data)).toBe(ACCEPT);
      for (const [path, changed] of withEachPartNeedingACopy(data)) {
        expect(DATA_VERDICTS[type](changed), path).toBe(DEFER);
        expect(compiled(changed), path).toBe(DEFER);
      }
    },
  );

  it.each(KNOWN_EVENT_TYPES)('answers as its compiled plan for valid %s data with one part of another type', (type) => {
    const data = createTestEvent(type).data as Record<string, unknown>;
    const compiled = compilePlan(plans.data[type]!);
    for (const replacement of [null, 'x', 7, [], {}]) {
      for (const [path, changed] of withEachPartReplaced(data, replacement)) {
        expect(DATA_VERDICTS[type](changed), `${path} = ${JSON.stringify(replacement)}`).toBe(compiled(changed));
      }
    }
  });

  it('answers for a released answer list as the compiled plan of releasedAnswerListSchema does', () => {
    expectSameVerdicts(answerListVerdict, plans.answerList);
  });
});
