/**
 * The functions behind the webhook schemas' `z.custom` checks, in a module without zod so a schema plan
 * (`schema-plan.ts`) can name them: a plan is data, and a function is written into it by its name here.
 */

/** What the envelope asks of `data`: an object, not null and not an array (its event type's schema checks the rest). */
export function isDataObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every predicate a plan may name. A `z.custom` whose function is not here cannot be planned: its schema is left to
 * zod alone.
 *
 * @example
 * ```ts
 * PLAN_PREDICATES.isDataObject({}) // true
 * ```
 */
export const PLAN_PREDICATES = { isDataObject } satisfies Record<string, (value: unknown) => unknown>;

/** The name of a predicate in {@link PLAN_PREDICATES}. */
export type PlanPredicateName = keyof typeof PLAN_PREDICATES;
