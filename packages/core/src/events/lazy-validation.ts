/*
 * Validation that loads zod only when it must. A value its schema plan ACCEPTs is valid and is its own result: no
 * zod. Any other value (one zod rejects, so its issues are needed, or one only zod can judge: see schema-plan.ts) waits
 * for the zod schemas, imported the first time such a value arrives. A genuine delivery is accepted by its plan, so a
 * receiver that only ever sees genuine deliveries never loads zod at all.
 */
import type { ZodMiniType } from 'zod/mini';
import type { ReleasedAnswer } from './events.js';
import { ReleasedAnswers, type LocatedAnswerList } from './released-answers.js';
import { ACCEPT, type PlanNode, type ValidationResult } from './schema-plan.js';

/** The module with the zod schemas (the `./schemas` entry), loaded on first need. */
export type ZodSchemas = typeof import('../schemas.js');

let loading: Promise<ZodSchemas> | undefined;

/**
 * Imports the zod schemas once. A failed import is not kept, so the next value that needs zod tries again.
 *
 * @example
 * ```ts
 * const { envelopeSchema } = await loadZodSchemas()
 * ```
 */
export function loadZodSchemas(): Promise<ZodSchemas> {
  loading ??= import('../schemas.js').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * A validator that answers by a schema plan's verdict (`compilePlan`'s, or a generated one) when it accepts
 * (synchronously, the value itself as the data) and by zod's `safeParse` of the schema `pick` chooses otherwise (a
 * promise: zod may have to be loaded first).
 *
 * @example
 * ```ts
 * const validateEnvelope = createLazyValidator(envelopeVerdict, (schemas) => schemas.envelopeSchema)
 * const result = validateEnvelope(JSON.parse(text)) // a result, or a promise of one when zod must answer
 * ```
 */
export function createLazyValidator<T>(
  verdict: PlanNode,
  pick: (schemas: ZodSchemas) => ZodMiniType<T>,
): (value: unknown) => ValidationResult<T> | Promise<ValidationResult<T>> {
  return (value) => {
    if (verdict(value) === ACCEPT) return { success: true, data: value as T };
    return loadZodSchemas().then((schemas) => {
      const parsed = pick(schemas).safeParse(value);
      return parsed.success ? { success: true, data: parsed.data } : { success: false, issues: parsed.error.issues };
    });
  };
}

/**
 * The released answers where `locateReleasedAnswerList` found them (none when it found nothing), without zod
 * unless the list needs zod's copy (an own `__proto__` key in an entry): then a promise.
 *
 * @example
 * ```ts
 * const answers = await releasedAnswersOf(locateReleasedAnswerList(claims, options.answersClaim))
 * ```
 */
export function releasedAnswersOf(found: LocatedAnswerList | undefined): ReleasedAnswers | Promise<ReleasedAnswers> {
  if (!found) return new ReleasedAnswers([]);
  if (!found.needsCopy) return new ReleasedAnswers(found.list as ReleasedAnswer[]);
  return loadZodSchemas().then((schemas) => new ReleasedAnswers(schemas.releasedAnswerListSchema.parse(found.list)));
}
