import { describe, expect, it } from 'vitest';
import { envelopeSchema } from './envelope.js';
import { eventDataSchemas, releasedAnswerListSchema } from './events.js';
import { KNOWN_EVENT_TYPES } from './event-types.js';
import { planOf } from './schema-guard.js';
import { ANSWER_LIST_PLAN, DATA_PLANS, ENVELOPE_PLAN } from './schema-plans.generated.js';

// The receiver accepts valid deliveries by these plans without loading zod, so they must be the zod schemas' own.
const REGENERATE = 'out of date: run `npm run generate:schema-plans` in packages/core';

describe('schema-plans.generated.ts', () => {
  it('holds the plan of envelopeSchema', () => {
    expect(ENVELOPE_PLAN, REGENERATE).toEqual(planOf(envelopeSchema));
  });

  it.each(KNOWN_EVENT_TYPES)('holds the plan of the data schema of %s', (type) => {
    expect(DATA_PLANS[type], REGENERATE).toEqual(planOf(eventDataSchemas[type]));
  });

  it('holds a plan for every event type and no other', () => {
    expect(Object.keys(DATA_PLANS).sort(), REGENERATE).toEqual([...KNOWN_EVENT_TYPES].sort());
  });

  it('holds the plan of releasedAnswerListSchema', () => {
    expect(ANSWER_LIST_PLAN, REGENERATE).toEqual(planOf(releasedAnswerListSchema));
  });
});
