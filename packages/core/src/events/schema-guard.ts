import { z } from 'zod';

/*
 * A fast yes/no answer to "would zod accept this value and hand it back unchanged?", derived from the schema's own
 * definition so zod stays the single source of truth. Each node mirrors the code zod runs for that construct
 * (zod/v4/core/schemas.js and checks.js); anything not mirrored here compiles to `undefined` and the caller uses zod.
 * Closures only, no `new Function`: the core runs on Web runtimes whose CSP forbids eval.
 *
 * Nodes answer in three ways. DEFER means "zod, not the input, must give the answer": zod accepts the value but
 * would return something else (it drops an own `__proto__` key so it cannot replace a prototype, and copies an object
 * with another prototype into a plain one), or an async z.custom makes zod's synchronous parse throw. The guard then
 * says false and the caller gets zod's result. Containers keep looking after a DEFER because a later REJECT still
 * decides the answer, while a union stops at its first option that does not reject, as zod's does.
 */
const REJECT = 0;
const ACCEPT = 1;
const DEFER = 2;
type Verdict = typeof REJECT | typeof ACCEPT | typeof DEFER;
type Node = (value: unknown) => Verdict;
type Test<T> = (value: T) => boolean;

/** What a schema guard returns for a value: whether zod accepts it unchanged. */
export type SchemaGuard = (value: unknown) => boolean;

/** The outcome of {@link createValidator}: the value on success, zod's issues on failure. */
export type ValidationResult<T> =
  { success: true; data: T } | { success: false; issues: readonly { path: PropertyKey[]; code: string }[] };

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
  const root = compileNode(schema, new Set());
  if (!root) return undefined;
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
export function createValidator<T>(schema: z.ZodType<T>): (value: unknown) => ValidationResult<T> {
  const guard = compileSchemaGuard(schema);
  return (value) => {
    if (guard?.(value)) return { success: true, data: value as T };
    const parsed = schema.safeParse(value);
    return parsed.success ? { success: true, data: parsed.data } : { success: false, issues: parsed.error.issues };
  };
}

function compileNode(schema: z.core.$ZodType, visiting: Set<z.core.$ZodType>): Node | undefined {
  // A schema that reaches itself (getters in a shape) would recurse forever here; zod handles those itself.
  if (!schema?._zod?.def || visiting.has(schema)) return undefined;
  visiting.add(schema);
  try {
    return compileFresh(schema, visiting);
  } finally {
    visiting.delete(schema);
  }
}

function compileFresh(schema: z.core.$ZodType, visiting: Set<z.core.$ZodType>): Node | undefined {
  const def = schema._zod.def;
  // Format schemas (z.iso.date(), z.int()) and z.custom are checks themselves, and zod runs them before def.checks.
  const checks: readonly z.core.$ZodCheck<never>[] = [
    ...(schema instanceof z.core.$ZodCheck ? [schema as z.core.$ZodCheck<never>] : []),
    ...(def.checks ?? []),
  ];
  if (schema instanceof z.core.$ZodString) return schema._zod.def.coerce ? undefined : stringNode(checks);
  if (schema instanceof z.core.$ZodNumber) return schema._zod.def.coerce ? undefined : numberNode(checks);
  if (schema instanceof z.core.$ZodCustom) return checks.length === 1 ? customNode(schema) : undefined;
  if (checks.length > 0) return undefined; // refine, superRefine, overwrite… on any other type
  if (schema instanceof z.core.$ZodBoolean)
    return schema._zod.def.coerce ? undefined : (value) => (typeof value === 'boolean' ? ACCEPT : REJECT);
  if (schema instanceof z.core.$ZodUnknown) return () => ACCEPT;
  if (schema instanceof z.core.$ZodOptional) return optionalNode(schema, visiting);
  if (schema instanceof z.core.$ZodObject) return looseObjectNode(schema, visiting);
  if (schema instanceof z.core.$ZodArray) return arrayNode(schema, visiting);
  if (schema instanceof z.core.$ZodUnion) return unionNode(schema, visiting);
  if (schema instanceof z.core.$ZodRecord) return recordNode(schema, visiting);
  return undefined;
}

/**
 * True when zod's copy of an object equals the object: zod builds a `{}` (so Object.prototype) and never gives it an
 * own `__proto__` key. Any other prototype, null included, would not survive the copy.
 */
function copiesUnchanged(value: object): boolean {
  return Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__');
}

/** One test per zod check, or undefined as soon as one check has no plain equivalent (zod then stays in charge). */
function compileTests<T>(
  checks: readonly z.core.$ZodCheck<never>[],
  testOf: (check: z.core.$ZodCheck<never>) => Test<T> | undefined,
): Test<T>[] | undefined {
  const tests: Test<T>[] = [];
  for (const check of checks) {
    const test = testOf(check);
    if (!test) return undefined;
    tests.push(test);
  }
  return tests;
}

function stringNode(checks: readonly z.core.$ZodCheck<never>[]): Node | undefined {
  const tests = compileTests(checks, stringTest);
  if (!tests) return undefined;
  return (value) => {
    if (typeof value !== 'string') return REJECT;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return REJECT;
    return ACCEPT;
  };
}

let lengthWhen: unknown;
/** zod's default `when` of length checks (run on anything with a length, which every string has); another means a custom condition. */
const defaultLengthWhen = (): unknown => (lengthWhen ??= z.minLength(0)._zod.def.when);

function stringTest(check: z.core.$ZodCheck<never>): Test<string> | undefined {
  const { codePointLength } = z.core.util;
  if (check instanceof z.core.$ZodCheckMinLength) {
    const { minimum, when } = check._zod.def;
    if (when !== defaultLengthWhen()) return undefined;
    // zod counts code points, not UTF-16 units; one code point is one or two units, so only that band needs counting.
    return (s) => s.length >= minimum && (s.length >= minimum * 2 || codePointLength(s) >= minimum);
  }
  if (check instanceof z.core.$ZodCheckMaxLength) {
    const { maximum, when } = check._zod.def;
    if (when !== defaultLengthWhen()) return undefined;
    return (s) => s.length <= maximum || codePointLength(s) <= maximum;
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
    return (s) => {
      pattern.lastIndex = 0; // as zod does, so a /g or /y pattern does not carry state between calls
      return pattern.test(s);
    };
  }
  return undefined;
}

function numberNode(checks: readonly z.core.$ZodCheck<never>[]): Node | undefined {
  const tests = compileTests(checks, numberTest);
  if (!tests) return undefined;
  return (value) => {
    // z.number() itself rejects NaN and ±Infinity; `.finite()` adds no check.
    if (typeof value !== 'number' || !Number.isFinite(value)) return REJECT;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return REJECT;
    return ACCEPT;
  };
}

function numberTest(check: z.core.$ZodCheck<never>): Test<number> | undefined {
  if (check._zod.def.when) return undefined;
  if (check instanceof z.core.$ZodCheckGreaterThan) {
    const { value: bound, inclusive } = check._zod.def;
    if (typeof bound !== 'number') return undefined;
    return inclusive ? (n) => n >= bound : (n) => n > bound;
  }
  if (check instanceof z.core.$ZodCheckLessThan) {
    const { value: bound, inclusive } = check._zod.def;
    if (typeof bound !== 'number') return undefined;
    return inclusive ? (n) => n <= bound : (n) => n < bound;
  }
  // `.int()` is the safeint format: an integer within ±(2^53 − 1), which is exactly Number.isSafeInteger.
  if (check instanceof z.core.$ZodCheckNumberFormat && check._zod.def.format === 'safeint') return Number.isSafeInteger;
  return undefined;
}

function customNode(schema: z.core.$ZodCustom): Node | undefined {
  const { fn, when } = schema._zod.def;
  if (typeof fn !== 'function' || when) return undefined;
  return (value) => {
    const result: unknown = fn(value);
    // An async refinement makes zod's synchronous parse throw; leave that to zod.
    if (result instanceof Promise) return DEFER;
    return result ? ACCEPT : REJECT;
  };
}

function optionalNode(schema: z.core.$ZodOptional, visiting: Set<z.core.$ZodType>): Node | undefined {
  // exactOptional shares the "optional" type but sends an explicit undefined to its inner type.
  if (schema instanceof z.core.$ZodExactOptional) return undefined;
  const inner = compileNode(schema._zod.def.innerType, visiting);
  if (!inner) return undefined;
  return (value) => (value === undefined ? ACCEPT : inner(value));
}

function looseObjectNode(schema: z.core.$ZodObject, visiting: Set<z.core.$ZodType>): Node | undefined {
  const { shape, catchall } = schema._zod.def;
  // Only loose objects return their extra keys as they are: strip mode drops them, strict mode fails on them, and
  // a typed catchall would have to be run on each. Either way the caller's zod call handles them.
  if (!(catchall instanceof z.core.$ZodUnknown) || (catchall._zod.def.checks?.length ?? 0) > 0) return undefined;
  if (Object.getOwnPropertySymbols(shape).length > 0) return undefined;
  const keys = Object.keys(shape);
  const nodes: Node[] = [];
  const mayBeAbsent: boolean[] = [];
  for (const key of keys) {
    // zod reads shape keys with `in` and `[key]`, which reach Object.prototype: a key named like one of its members
    // ("constructor", "__proto__") would be "present" on every object, and zod would copy the inherited value.
    if (key in Object.prototype) return undefined;
    const field = shape[key]!;
    const node = compileNode(field, visiting);
    if (!node) return undefined;
    const { optin, optout } = field._zod;
    // Absent keys: zod skips one whose schema is optional in and out and fails any other (handlePropertyResult).
    if (optin !== undefined && (optin !== 'optional' || optout !== 'optional')) return undefined;
    nodes.push(node);
    mayBeAbsent.push(optin === 'optional');
  }
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

function arrayNode(schema: z.core.$ZodArray, visiting: Set<z.core.$ZodType>): Node | undefined {
  const element = compileNode(schema._zod.def.element, visiting);
  if (!element) return undefined;
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

function unionNode(schema: z.core.$ZodUnion, visiting: Set<z.core.$ZodType>): Node | undefined {
  // z.xor and z.discriminatedUnion share the "union" type but choose differently (exactly one match, by key).
  if (schema instanceof z.core.$ZodXor || schema instanceof z.core.$ZodDiscriminatedUnion) return undefined;
  const { options, inclusive } = schema._zod.def as z.core.$ZodUnionDef & { inclusive?: boolean };
  if (inclusive === false) return undefined;
  const nodes: Node[] = [];
  for (const option of options) {
    const node = compileNode(option, visiting);
    if (!node) return undefined;
    nodes.push(node);
  }
  return (value) => {
    // zod returns the first option without issues, so the first option that does not reject decides.
    for (let i = 0; i < nodes.length; i++) {
      const result = nodes[i]!(value);
      if (result !== REJECT) return result;
    }
    return REJECT;
  };
}

function recordNode(schema: z.core.$ZodRecord, visiting: Set<z.core.$ZodType>): Node | undefined {
  const def = schema._zod.def as z.core.$ZodRecordDef & { mode?: string; partial?: boolean };
  // A string key type has no enumerable values, so zod walks the object's own keys. It also makes zod's retry of a
  // numeric key as a number moot: a number never passes a string schema.
  if (!(def.keyType instanceof z.core.$ZodString) || def.mode !== undefined || def.partial) return undefined;
  const keyNode = compileNode(def.keyType, visiting);
  const valueNode = compileNode(def.valueType, visiting);
  if (!keyNode || !valueNode) return undefined;
  const { isPlainObject } = z.core.util;
  return (value) => {
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
  };
}
