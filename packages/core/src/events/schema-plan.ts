/*
 * A schema plan is a zod schema written down as plain data: what `schema-guard.ts` reads from a schema's definition,
 * kept so the receiver can answer "would zod accept this value and hand it back unchanged?" without loading zod.
 * Importing zod costs more than the rest of the core together (about 240 M instructions and 95 modules on Node), and
 * a genuine delivery never needs it: zod is loaded only when a plan's answer is not ACCEPT, to give its issues or its
 * copy (`lazy-validation.ts`).
 *
 * The plans of the webhook schemas are generated from the zod schemas (`schema-plans.generated.ts`, by
 * `planOf` in `schema-guard.ts`), and a test fails when they drift apart, so zod stays the single source of truth.
 * Each node mirrors the code zod runs for that construct (zod/v4/core/schemas.js and checks.js). Closures only, no
 * `new Function`: the core runs on Web runtimes whose CSP forbids eval.
 *
 * Nodes answer in three ways. DEFER means "zod, not the input, must give the answer": zod accepts the value but
 * would return something else (it drops an own `__proto__` key so it cannot replace a prototype, and copies an object
 * with another prototype into a plain one), or an async custom check makes zod's synchronous parse throw. Containers
 * keep looking after a DEFER because a later REJECT still decides the answer, while a union stops at its first option
 * that does not reject, as zod's does.
 */
import { PLAN_PREDICATES, type PlanPredicateName } from './predicates.js';

// The generated plan functions (schema-plans.generated.ts) import their helpers from here.
export { rememberingTest } from './patterns.js';

export const REJECT = 0;
export const ACCEPT = 1;
export const DEFER = 2;
/** A plan's answer for a value: zod rejects it, accepts it as it is, or must answer itself. */
export type Verdict = typeof REJECT | typeof ACCEPT | typeof DEFER;

/** One check of a string: zod's min and max length (in code points) and a regex (`.regex()`, ISO date and datetime). */
export type StringCheck = { min: number } | { max: number } | { pattern: string; flags: string };

/** One check of a number: bounds, and `.int()` (zod's safeint format). */
export type NumberCheck = { gte: number } | { gt: number } | { lte: number } | { lt: number } | { safeint: true };

/** A zod schema as plain data; see the file's header. */
export type SchemaPlan =
  | { kind: 'string'; checks: StringCheck[] }
  | { kind: 'number'; checks: NumberCheck[] }
  | { kind: 'boolean' }
  | { kind: 'unknown' }
  /**
   * A `z.custom` check: by its name in `PLAN_PREDICATES` in a plan written down as data, or the function itself in a
   * plan built at run time (`compileSchemaGuard` of any schema), which cannot be written down.
   */
  | { kind: 'custom'; predicate: PlanPredicateName | ((value: unknown) => unknown) }
  | { kind: 'optional'; inner: SchemaPlan }
  /** A loose object: the listed keys checked, in order; any other key kept as it is. */
  | { kind: 'object'; fields: { key: string; plan: SchemaPlan; mayBeAbsent: boolean }[] }
  | { kind: 'array'; element: SchemaPlan }
  | { kind: 'union'; options: SchemaPlan[] }
  | { kind: 'record'; key: SchemaPlan; value: SchemaPlan };

/** What a validation ends in: the value on success, zod's issues on failure. */
export type ValidationResult<T> =
  { success: true; data: T } | { success: false; issues: readonly { path: PropertyKey[]; code: string }[] };

/** A compiled plan: its verdict for a value, without allocating. */
export type PlanNode = (value: unknown) => Verdict;

/**
 * Compiles a plan into a function that answers, for any value, what zod's `safeParse` would do with it: ACCEPT (it
 * succeeds and returns the value itself), REJECT (it fails), or DEFER (only zod can say).
 *
 * @example
 * ```ts
 * const verdict = compilePlan({ kind: 'string', checks: [{ min: 1 }] })
 * verdict('a') === ACCEPT // true
 * ```
 */
export function compilePlan(plan: SchemaPlan): PlanNode {
  switch (plan.kind) {
    case 'string':
      return stringNode(plan.checks);
    case 'number':
      return numberNode(plan.checks);
    case 'boolean':
      return (value) => (typeof value === 'boolean' ? ACCEPT : REJECT);
    case 'unknown':
      return () => ACCEPT;
    case 'custom':
      return customNode(typeof plan.predicate === 'function' ? plan.predicate : PLAN_PREDICATES[plan.predicate]);
    case 'optional': {
      const inner = compilePlan(plan.inner);
      return (value) => (value === undefined ? ACCEPT : inner(value));
    }
    case 'object':
      return looseObjectNode(plan.fields);
    case 'array':
      return arrayNode(compilePlan(plan.element));
    case 'union':
      return unionNode(plan.options.map(compilePlan));
    case 'record':
      return recordNode(compilePlan(plan.key), compilePlan(plan.value));
  }
}

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Code points in a string, counted as zod's `util.codePointLength` does (a lone surrogate counts as one). */
function codePointLength(s: string): number {
  if (!HIGH_SURROGATE.test(s)) return s.length;
  let count = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/**
 * zod's `.min(n)` of a string: at least `n` code points. zod counts code points, not UTF-16 units; one code point is
 * one or two units, so only that band needs counting.
 *
 * @example
 * ```ts
 * hasMinCodePoints('😀', 2) // false: two units, one code point
 * ```
 */
export function hasMinCodePoints(s: string, min: number): boolean {
  return s.length >= min && (s.length >= min * 2 || codePointLength(s) >= min);
}

/**
 * zod's `.max(n)` of a string: at most `n` code points.
 *
 * @example
 * ```ts
 * hasMaxCodePoints('😀😀', 2) // true: four units, two code points
 * ```
 */
export function hasMaxCodePoints(s: string, max: number): boolean {
  return s.length <= max || codePointLength(s) <= max;
}

/**
 * A pattern's test from the start of the string, as zod runs it: a /g or /y pattern does not carry its position
 * between calls.
 *
 * @example
 * ```ts
 * testPattern(/a/g, 'a') && testPattern(/a/g, 'a') // true
 * ```
 */
export function testPattern(pattern: RegExp, s: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(s);
}

function stringTest(check: StringCheck): (s: string) => boolean {
  if ('min' in check) return (s) => hasMinCodePoints(s, check.min);
  if ('max' in check) return (s) => hasMaxCodePoints(s, check.max);
  const pattern = new RegExp(check.pattern, check.flags);
  return (s) => testPattern(pattern, s);
}

function stringNode(checks: readonly StringCheck[]): PlanNode {
  const tests = checks.map(stringTest);
  return (value) => {
    if (typeof value !== 'string') return REJECT;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return REJECT;
    return ACCEPT;
  };
}

function numberTest(check: NumberCheck): (n: number) => boolean {
  if ('gte' in check) return (n) => n >= check.gte;
  if ('gt' in check) return (n) => n > check.gt;
  if ('lte' in check) return (n) => n <= check.lte;
  if ('lt' in check) return (n) => n < check.lt;
  // `.int()` is the safeint format: an integer within ±(2^53 − 1), which is exactly Number.isSafeInteger.
  return Number.isSafeInteger;
}

function numberNode(checks: readonly NumberCheck[]): PlanNode {
  const tests = checks.map(numberTest);
  return (value) => {
    // z.number() itself rejects NaN and ±Infinity; `.finite()` adds no check.
    if (typeof value !== 'number' || !Number.isFinite(value)) return REJECT;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return REJECT;
    return ACCEPT;
  };
}

function customNode(predicate: (value: unknown) => unknown): PlanNode {
  return (value) => {
    const result = predicate(value);
    // An async refinement makes zod's synchronous parse throw; leave that to zod.
    if (result instanceof Promise) return DEFER;
    return result ? ACCEPT : REJECT;
  };
}

/**
 * True when zod's copy of an object equals the object: zod builds a `{}` (so Object.prototype) and never gives it an
 * own `__proto__` key. Any other prototype, null included, would not survive the copy. `scripts/plan-code.ts` writes
 * the same test in place in the generated checks; its property test fails when the two part.
 *
 * @example
 * ```ts
 * copiesUnchanged({ a: 1 }) // true
 * copiesUnchanged(Object.create(null)) // false: zod's copy has Object.prototype
 * ```
 */
export function copiesUnchanged(value: object): boolean {
  return Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__');
}

function looseObjectNode(fields: readonly { key: string; plan: SchemaPlan; mayBeAbsent: boolean }[]): PlanNode {
  const keys = fields.map((field) => field.key);
  const nodes = fields.map((field) => compilePlan(field.plan));
  const mayBeAbsent = fields.map((field) => field.mayBeAbsent);
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return REJECT;
    const record = value as Record<string, unknown>;
    let verdict: Verdict = ACCEPT;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const item = record[key];
      // Only an undefined value needs the absent/present distinction: present-but-undefined is validated like any value.
      if (item === undefined && !(key in record)) {
        if (mayBeAbsent[i]) continue;
        return REJECT;
      }
      const result = nodes[i]!(item);
      if (result === REJECT) return REJECT;
      if (result === DEFER) verdict = DEFER;
    }
    return verdict === ACCEPT && !copiesUnchanged(record) ? DEFER : verdict;
  };
}

function arrayNode(element: PlanNode): PlanNode {
  return (value) => {
    if (!Array.isArray(value)) return REJECT;
    let verdict: Verdict = Object.getPrototypeOf(value) === Array.prototype ? ACCEPT : DEFER;
    for (let i = 0; i < value.length; i++) {
      const result = element(value[i]);
      if (result === REJECT) return REJECT;
      if (result === DEFER) verdict = DEFER;
    }
    return verdict;
  };
}

function unionNode(options: readonly PlanNode[]): PlanNode {
  return (value) => {
    // zod returns the first option without issues, so the first option that does not reject decides.
    for (let i = 0; i < options.length; i++) {
      const result = options[i]!(value);
      if (result !== REJECT) return result;
    }
    return REJECT;
  };
}

/** zod's `util.isPlainObject`: an object whose constructor, if any, looks like Object's (its prototype has `isPrototypeOf`). */
function isPlainObject(value: unknown): value is Record<PropertyKey, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prototype: unknown = (ctor as { prototype?: unknown }).prototype;
  if (typeof prototype !== 'object' || prototype === null || Array.isArray(prototype)) return false;
  return Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf');
}

/**
 * A record's verdict (zod's `z.record`): every own enumerable key and its value checked by the given nodes.
 *
 * @example
 * ```ts
 * recordVerdict({ a: 1 }, compilePlan({ kind: 'string', checks: [] }), compilePlan({ kind: 'unknown' })) // ACCEPT
 * ```
 */
export function recordVerdict(value: unknown, keyNode: PlanNode, valueNode: PlanNode): Verdict {
  if (!isPlainObject(value)) return REJECT;
  let verdict: Verdict = Object.getPrototypeOf(value) === Object.prototype ? ACCEPT : DEFER;
  // Reflect.ownKeys like zod (the one allocation here), because an enumerable symbol key fails a string key type.
  for (const key of Reflect.ownKeys(value)) {
    if (key === '__proto__') {
      verdict = DEFER; // zod leaves it out of its copy
      continue;
    }
    if (!Object.prototype.propertyIsEnumerable.call(value, key)) continue; // zod skips these too
    if (keyNode(key) === REJECT) return REJECT;
    const result = valueNode(value[key]);
    if (result === REJECT) return REJECT;
    if (result === DEFER) verdict = DEFER;
  }
  return verdict;
}

function recordNode(keyNode: PlanNode, valueNode: PlanNode): PlanNode {
  return (value) => recordVerdict(value, keyNode, valueNode);
}
