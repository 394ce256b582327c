import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ItemList, PLAN_EDGES, planValues } from '../../scripts/plan-values.js';
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

/** What a change answers for a part it leaves as it is. */
const UNCHANGED = Symbol('unchanged');

/**
 * Copies of `value`, one per part of it at any depth (itself included) that `change` answers something other than
 * {@link UNCHANGED} for, with that part changed; each comes with its path.
 */
function withEachPartChanged(
  value: unknown,
  change: (part: unknown, path: string) => unknown,
  path = 'data',
): [string, unknown][] {
  const here = change(value, path);
  const copies: [string, unknown][] = here === UNCHANGED ? [] : [[path, here]];
  if (typeof value !== 'object' || value === null) return copies;
  for (const [key, part] of Object.entries(value)) {
    for (const [innerPath, changedPart] of withEachPartChanged(part, change, `${path}.${key}`)) {
      const copy = Array.isArray(value)
        ? value.map((item, index) => (String(index) === key ? changedPart : item))
        : { ...value, [key]: changedPart };
      copies.push([innerPath, copy]);
    }
  }
  return copies;
}

/** A part as zod must copy it: an object with an own `__proto__` key (as JSON.parse makes), an array of another class. */
function needingACopy(part: unknown): unknown {
  if (typeof part !== 'object' || part === null) return UNCHANGED;
  return Array.isArray(part)
    ? Object.setPrototypeOf([...part], ItemList.prototype)
    : Object.defineProperty({ ...part }, '__proto__', { value: {}, enumerable: true });
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
      for (const [path, changed] of withEachPartChanged(data, needingACopy)) {
        expect(DATA_VERDICTS[type](changed), path).toBe(DEFER);
        expect(compiled(changed), path).toBe(DEFER);
      }
    },
  );

  it.each(KNOWN_EVENT_TYPES)('answers as its compiled plan for valid %s data with one part of another type', (type) => {
    const data = createTestEvent(type).data as Record<string, unknown>;
    const compiled = compilePlan(plans.data[type]!);
    for (const replacement of [null, 'x', 7, [], {}]) {
      const replaced = (_part: unknown, path: string): unknown => (path === 'data' ? UNCHANGED : replacement);
      for (const [path, changed] of withEachPartChanged(data, replaced)) {
        expect(DATA_VERDICTS[type](changed), `${path} = ${JSON.stringify(replacement)}`).toBe(compiled(changed));
      }
    }
  });

  it('answers for a released answer list as the compiled plan of releasedAnswerListSchema does', () => {
    expectSameVerdicts(answerListVerdict, plans.answerList);
  });
});
