// zod/mini and zod/v4/core (as z.core): the same classes as zod's classic API, so schemas of either build are read
// here, and a bundle of ./schemas does not carry the classic API.
import * as z from 'zod/mini';
import { PLAN_PREDICATES, type PlanPredicateName } from './predicates.js';
import {
  ACCEPT,
  compilePlan,
  type NumberCheck,
  type SchemaPlan,
  type StringCheck,
  type ValidationResult,
} from './schema-plan.js';

/*
 * Reads a zod schema's definition into a schema plan (`schema-plan.ts`): plain data that answers "would zod accept
 * this value and hand it back unchanged?" without zod. Only what the webhook schemas use is planned; anything else
 * (every construct whose output may differ from its input, refinements) has no plan, and the caller keeps using zod
 * alone.
 */

/** What a schema guard returns for a value: whether zod accepts it unchanged. */
export type SchemaGuard = (value: unknown) => boolean;

/** The outcome of {@link createValidator}: the value on success, zod's issues on failure. */
export type { ValidationResult } from './schema-plan.js';

/**
 * Compiles a predicate that answers, without allocating, whether `schema.safeParse(value)` would succeed and return
 * `value` itself (deep-equal, key order aside). It is built from the schema's definition and supports only what the
 * webhook schemas use: loose objects, strings (min, max, regex, ISO date and date-time), numbers (int, bounds),
 * booleans, optional, union, array, `record(string, …)`, unknown and custom. For anything else, including every
 * construct whose output may differ from its input (transform, pipe, default, catch, strip or strict objects) and
 * refinements, it returns `undefined` so the caller keeps using zod alone.
 *
 * `false` means zod rejects the value, with one exception: a value zod accepts but would copy rather than return as
 * is (an object with an own `__proto__` key, as `JSON.parse` makes, or whose prototype is not Object.prototype). Let
 * zod answer whenever the guard says false, as {@link createValidator} does. Out of scope, since `JSON.parse` never
 * makes them: symbol or non-enumerable keys on a loose object (zod's copy drops or re-enumerates them) and enumerable
 * keys added to Object.prototype (zod copies them).
 *
 * @example
 * ```ts
 * const isEnvelope = compileSchemaGuard(envelopeSchema)
 * const valid = isEnvelope ? isEnvelope(value) : envelopeSchema.safeParse(value).success
 * ```
 */
export function compileSchemaGuard(schema: z.core.$ZodType): SchemaGuard | undefined {
  const plan = planOf(schema);
  if (!plan) return undefined;
  const root = compilePlan(plan);
  return (value) => root(value) === ACCEPT;
}

/**
 * Validates with the guard when possible and falls back to zod for the issues (or for schemas the guard cannot
 * compile). On success through the guard, `data` is the input itself, not a copy.
 *
 * @example
 * ```ts
 * const validateEnvelope = createValidator(envelopeSchema)
 * const result = validateEnvelope(JSON.parse(text))
 * if (!result.success) console.log(result.issues.map((issue) => issue.path.join('.')))
 * ```
 */
export function createValidator<T>(schema: z.core.$ZodType<T>): (value: unknown) => ValidationResult<T> {
  const guard = compileSchemaGuard(schema);
  return (value) => {
    if (guard?.(value)) return { success: true, data: value as T };
    const parsed = z.safeParse(schema, value);
    return parsed.success ? { success: true, data: parsed.data } : { success: false, issues: parsed.error.issues };
  };
}

/**
 * The plan of a zod schema (see `schema-plan.ts`), or undefined when some part of it has no plan.
 *
 * @example
 * ```ts
 * planOf(z.string().min(1)) // { kind: 'string', checks: [{ min: 1 }] }
 * ```
 */
export function planOf(schema: z.core.$ZodType): SchemaPlan | undefined {
  return planNode(schema, new Set());
}

function planNode(schema: z.core.$ZodType, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  // A schema that reaches itself (getters in a shape) would recurse forever here; zod handles those itself.
  if (!schema?._zod?.def || visiting.has(schema)) return undefined;
  visiting.add(schema);
  try {
    return planFresh(schema, visiting);
  } finally {
    visiting.delete(schema);
  }
}

function planFresh(schema: z.core.$ZodType, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  const def = schema._zod.def;
  // Format schemas (z.iso.date(), z.int()) and z.custom are checks themselves, and zod runs them before def.checks.
  const checks: readonly z.core.$ZodCheck<never>[] = [
    ...(schema instanceof z.core.$ZodCheck ? [schema as z.core.$ZodCheck<never>] : []),
    ...(def.checks ?? []),
  ];
  if (schema instanceof z.core.$ZodString) return schema._zod.def.coerce ? undefined : stringPlan(checks);
  if (schema instanceof z.core.$ZodNumber) return schema._zod.def.coerce ? undefined : numberPlan(checks);
  if (schema instanceof z.core.$ZodCustom) return checks.length === 1 ? customPlan(schema) : undefined;
  if (checks.length > 0) return undefined; // refine, superRefine, overwrite… on any other type
  if (schema instanceof z.core.$ZodBoolean) return schema._zod.def.coerce ? undefined : { kind: 'boolean' };
  if (schema instanceof z.core.$ZodUnknown) return { kind: 'unknown' };
  if (schema instanceof z.core.$ZodOptional) return optionalPlan(schema, visiting);
  if (schema instanceof z.core.$ZodObject) return looseObjectPlan(schema, visiting);
  if (schema instanceof z.core.$ZodArray) return arrayPlan(schema, visiting);
  if (schema instanceof z.core.$ZodUnion) return unionPlan(schema, visiting);
  if (schema instanceof z.core.$ZodRecord) return recordPlan(schema, visiting);
  return undefined;
}

/** One plan check per zod check, or undefined as soon as one check has none (zod then stays in charge). */
function planChecks<T>(
  checks: readonly z.core.$ZodCheck<never>[],
  checkOf: (check: z.core.$ZodCheck<never>) => T | undefined,
): T[] | undefined {
  const planned: T[] = [];
  for (const check of checks) {
    const one = checkOf(check);
    if (one === undefined) return undefined;
    planned.push(one);
  }
  return planned;
}

function stringPlan(checks: readonly z.core.$ZodCheck<never>[]): SchemaPlan | undefined {
  const planned = planChecks(checks, stringCheck);
  return planned && { kind: 'string', checks: planned };
}

let lengthWhen: unknown;
/** zod's default `when` of length checks (run on anything with a length, which every string has); another means a custom condition. */
const defaultLengthWhen = (): unknown => (lengthWhen ??= z.minLength(0)._zod.def.when);

function stringCheck(check: z.core.$ZodCheck<never>): StringCheck | undefined {
  if (check instanceof z.core.$ZodCheckMinLength) {
    const { minimum, when } = check._zod.def;
    return when === defaultLengthWhen() ? { min: minimum } : undefined;
  }
  if (check instanceof z.core.$ZodCheckMaxLength) {
    const { maximum, when } = check._zod.def;
    return when === defaultLengthWhen() ? { max: maximum } : undefined;
  }
  if (check instanceof z.core.$ZodCheckStringFormat) {
    const { format, pattern, when } = check._zod.def;
    // Only formats whose whole check is the stored pattern: others (url, ipv6, z.stringFormat's fn…) run code.
    const patternOnly =
      (format === 'regex' && check instanceof z.core.$ZodCheckRegex) ||
      (format === 'datetime' && check instanceof z.core.$ZodISODateTime) ||
      (format === 'date' && check instanceof z.core.$ZodISODate);
    if (!patternOnly || check instanceof z.core.$ZodCustomStringFormat || !(pattern instanceof RegExp) || when)
      return undefined;
    return { pattern: pattern.source, flags: pattern.flags };
  }
  return undefined;
}

function numberPlan(checks: readonly z.core.$ZodCheck<never>[]): SchemaPlan | undefined {
  const planned = planChecks(checks, numberCheck);
  return planned && { kind: 'number', checks: planned };
}

function numberCheck(check: z.core.$ZodCheck<never>): NumberCheck | undefined {
  if (check._zod.def.when) return undefined;
  if (check instanceof z.core.$ZodCheckGreaterThan) {
    const { value: bound, inclusive } = check._zod.def;
    if (typeof bound !== 'number') return undefined;
    return inclusive ? { gte: bound } : { gt: bound };
  }
  if (check instanceof z.core.$ZodCheckLessThan) {
    const { value: bound, inclusive } = check._zod.def;
    if (typeof bound !== 'number') return undefined;
    return inclusive ? { lte: bound } : { lt: bound };
  }
  if (check instanceof z.core.$ZodCheckNumberFormat && check._zod.def.format === 'safeint') return { safeint: true };
  return undefined;
}

/** A custom check is planned by the name of its function when it is one of {@link PLAN_PREDICATES}, else by the function. */
function customPlan(schema: z.core.$ZodCustom): SchemaPlan | undefined {
  const { fn, when } = schema._zod.def;
  if (typeof fn !== 'function' || when) return undefined;
  const name = (Object.keys(PLAN_PREDICATES) as PlanPredicateName[]).find(
    (candidate) => PLAN_PREDICATES[candidate] === fn,
  );
  return { kind: 'custom', predicate: name ?? (fn as (value: unknown) => unknown) };
}

function optionalPlan(schema: z.core.$ZodOptional, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  // exactOptional shares the "optional" type but sends an explicit undefined to its inner type.
  if (schema instanceof z.core.$ZodExactOptional) return undefined;
  const inner = planNode(schema._zod.def.innerType, visiting);
  return inner && { kind: 'optional', inner };
}

function looseObjectPlan(schema: z.core.$ZodObject, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  const { shape, catchall } = schema._zod.def;
  // Only loose objects return their extra keys as they are: strip mode drops them, strict mode fails on them, and
  // a typed catchall would have to be run on each. Either way the caller's zod call handles them.
  if (!(catchall instanceof z.core.$ZodUnknown) || (catchall._zod.def.checks?.length ?? 0) > 0) return undefined;
  if (Object.getOwnPropertySymbols(shape).length > 0) return undefined;
  const fields: { key: string; plan: SchemaPlan; mayBeAbsent: boolean }[] = [];
  for (const key of Object.keys(shape)) {
    // zod reads shape keys with `in` and `[key]`, which reach Object.prototype: a key named like one of its members
    // ("constructor", "__proto__") would be "present" on every object, and zod would copy the inherited value.
    if (key in Object.prototype) return undefined;
    const field = shape[key]!;
    const plan = planNode(field, visiting);
    if (!plan) return undefined;
    const { optin, optout } = field._zod;
    // Absent keys: zod skips one whose schema is optional in and out and fails any other (handlePropertyResult).
    if (optin !== undefined && (optin !== 'optional' || optout !== 'optional')) return undefined;
    fields.push({ key, plan, mayBeAbsent: optin === 'optional' });
  }
  return { kind: 'object', fields };
}

function arrayPlan(schema: z.core.$ZodArray, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  const element = planNode(schema._zod.def.element, visiting);
  return element && { kind: 'array', element };
}

function unionPlan(schema: z.core.$ZodUnion, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  // z.xor and z.discriminatedUnion share the "union" type but choose differently (exactly one match, by key).
  if (schema instanceof z.core.$ZodXor || schema instanceof z.core.$ZodDiscriminatedUnion) return undefined;
  const { options, inclusive } = schema._zod.def as z.core.$ZodUnionDef & { inclusive?: boolean };
  if (inclusive === false) return undefined;
  const planned: SchemaPlan[] = [];
  for (const option of options) {
    const plan = planNode(option, visiting);
    if (!plan) return undefined;
    planned.push(plan);
  }
  return { kind: 'union', options: planned };
}

function recordPlan(schema: z.core.$ZodRecord, visiting: Set<z.core.$ZodType>): SchemaPlan | undefined {
  const def = schema._zod.def as z.core.$ZodRecordDef & { mode?: string; partial?: boolean };
  // A string key type has no enumerable values, so zod walks the object's own keys. It also makes zod's retry of a
  // numeric key as a number moot: a number never passes a string schema.
  if (!(def.keyType instanceof z.core.$ZodString) || def.mode !== undefined || def.partial) return undefined;
  const key = planNode(def.keyType, visiting);
  const value = planNode(def.valueType, visiting);
  return key && value && { kind: 'record', key, value };
}
