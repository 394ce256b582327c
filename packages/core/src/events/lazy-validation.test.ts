import { describe, expect, it } from 'vitest';
import { createLazyValidator, loadZodSchemas, releasedAnswersOf } from './lazy-validation.js';
import { envelopeVerdict } from './schema-plans.generated.js';
import { locateReleasedAnswerList } from './released-answers.js';

const validateEnvelope = createLazyValidator(envelopeVerdict, (schemas) => schemas.envelopeSchema);

const envelope = {
  event: 'kyb.data_request.refused',
  event_id: '01JD2Z3K4M5N6P7Q8R9S0T1V2W',
  stream_id: 'dr_1',
  seq: 3,
  timestamp: 1763899200,
  api_version: '2026-01-01',
  data: { reason: 'expired' },
};

const answer = { name: 'company_name', subject_type: 'business', subject: '0x9b2e', value: 'Acme' };

describe('createLazyValidator', () => {
  it('answers a value its plan accepts at once (no promise, so no zod) with the value itself', () => {
    const result = validateEnvelope(envelope);
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual({ success: true, data: envelope });
    expect((result as { data: unknown }).data).toBe(envelope);
  });

  it('answers a value zod rejects through zod, with zod’s issues', async () => {
    const result = validateEnvelope({ ...envelope, seq: -1, stream_id: '' });
    expect(result).toBeInstanceOf(Promise);
    const settled = await result;
    expect(settled.success).toBe(false);
    if (!settled.success) {
      expect(settled.issues.map((issue) => [issue.path.join('.'), issue.code])).toEqual([
        ['stream_id', 'too_small'],
        ['seq', 'too_small'],
      ]);
    }
  });

  it('leaves a value only zod can judge (an own __proto__ key) to zod, and gets zod’s copy without that key', async () => {
    const odd = JSON.parse(JSON.stringify(envelope).replace('{"event"', '{"__proto__":{"x":1},"event"')) as object;
    expect(Object.hasOwn(odd, '__proto__')).toBe(true);
    const result = validateEnvelope(odd);
    expect(result).toBeInstanceOf(Promise);
    const settled = await result;
    expect(settled.success).toBe(true);
    if (settled.success) {
      expect(settled.data).not.toBe(odd);
      expect(Object.hasOwn(settled.data, '__proto__')).toBe(false);
      expect(settled.data.event_id).toBe(envelope.event_id);
    }
  });
});

describe('loadZodSchemas', () => {
  it('imports the ./schemas entry once, and hands the same module to every caller', async () => {
    const first = loadZodSchemas();
    expect(loadZodSchemas()).toBe(first);
    expect(Object.keys(await first)).toEqual(expect.arrayContaining(['envelopeSchema', 'eventDataSchemas']));
  });
});

describe('releasedAnswersOf', () => {
  /** The answers among `claims`, located as the attestation's binding locates them. */
  const answersOf = (claims: Record<string, unknown>, answersClaim?: string) =>
    releasedAnswersOf(locateReleasedAnswerList(claims, answersClaim));

  it('finds the answers without zod when the plan accepts them: the claims’ own entries, at once', () => {
    const list = [answer];
    const answers = answersOf({ answers: list });
    expect(answers).not.toBeInstanceOf(Promise);
    expect([...(answers as Iterable<unknown>)][0]).toBe(answer);
  });

  it('gives empty answers, at once, when the claims carry none', () => {
    const answers = answersOf({ event_id: 'x' });
    expect(answers).not.toBeInstanceOf(Promise);
    expect((answers as { size: number }).size).toBe(0);
  });

  it('reads only the named claim with answersClaim', () => {
    const answers = answersOf({ answers: [answer], released_values: [] }, 'released_values');
    expect((answers as { size: number }).size).toBe(0);
  });

  it('takes zod’s copy of an entry with an own __proto__ key: the key is gone, the answer kept', async () => {
    const odd = JSON.parse(JSON.stringify([answer]).replace('[{', '[{"__proto__":{"polluted":true},')) as object[];
    const answers = answersOf({ answers: odd });
    expect(answers).toBeInstanceOf(Promise);
    const [entry] = [...(await answers)];
    expect(entry).toEqual(answer);
    expect(Object.hasOwn(entry!, '__proto__')).toBe(false);
  });
});
