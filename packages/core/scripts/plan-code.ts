/**
 * Writes schema plans (src/events/schema-plan.ts) as TypeScript: one straight-line function per plan node, with the
 * keys, patterns and bounds written in. `compilePlan` answers the same from closures over the plan's data; that is
 * what a schema known only at run time gets, but for the webhook schemas every delivery runs the plans, and generic
 * closures (a keyed property load with a different key at each step, a call to a different closure for each field)
 * cost a fresh process about 49,000 instructions per delivery over its first thousand on Node 24, most of it compiling
 * those closures. Written out, each property load and call has one shape. The test beside the generated module checks
 * that every function answers as `compilePlan` does.
 */
import {
  ACCEPT,
  compilePlan,
  REJECT,
  type NumberCheck,
  type SchemaPlan,
  type StringCheck,
} from '../src/events/schema-plan.js';
import type { PlanPredicateName } from '../src/events/predicates.js';

/** A name `record.name` can be written with. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The predicates of predicates.ts written in place, each as the expression its function returns, as are
 * copiesUnchanged's test and short code-point bounds: a call costs a new process's baseline code about 120
 * instructions, and called, these ran about 20 times in each of the bench's deliveries. The property test beside this
 * file holds each written expression to the function compilePlan calls.
 */
const WRITTEN_PREDICATES = {
  isDataObject: (value) => `typeof ${value} === 'object' && ${value} !== null && !Array.isArray(${value})`,
} satisfies Record<PlanPredicateName, (value: string) => string>;

/** Helpers of schema-plan.ts the written functions call, each imported only when used. */
export type PlanHelper = 'hasMinCodePoints' | 'hasMaxCodePoints' | 'recordVerdict' | 'rememberingTest';

/**
 * Collects the functions of any number of plans, sharing one function between equal nodes.
 *
 * @example
 * ```ts
 * const writer = new PlanWriter()
 * const name = writer.functionOf({ kind: 'string', checks: [{ min: 1 }] })
 * writer.declarations() // the pattern tests and `function v0(value: unknown): Verdict { ... }`
 * ```
 */
export class PlanWriter {
  readonly #functions = new Map<string, string>();
  readonly #bodies: string[] = [];
  readonly #patterns = new Map<string, string>();
  readonly #helpers = new Set<PlanHelper>();

  /** The name of a function `(value: unknown) => Verdict` that answers as `compilePlan(plan)` does. */
  functionOf(plan: SchemaPlan): string {
    const key = JSON.stringify(plan);
    const known = this.#functions.get(key);
    if (known !== undefined) return known;
    const body = this.#bodyOf(plan);
    const name = `v${this.#functions.size}`;
    this.#functions.set(key, name);
    // A plan that accepts anything does not read its value.
    const parameter = body === 'return ACCEPT;' ? '_value' : 'value';
    this.#bodies.push(`function ${name}(${parameter}: unknown): Verdict {\n${body}\n}`);
    return name;
  }

  /** The pattern tests (one `rememberingTest` per pattern), then the functions, each after those it calls. */
  declarations(): string {
    const patterns = [...this.#patterns].map(([key, name]) => {
      const { pattern, flags } = JSON.parse(key) as { pattern: string; flags: string };
      return `const ${name} = rememberingTest(new RegExp(${JSON.stringify(pattern)}, ${JSON.stringify(flags)}));`;
    });
    return [...patterns, ...this.#bodies].join('\n\n');
  }

  /** The helpers of schema-plan.ts the functions call. */
  imports(): { helpers: PlanHelper[] } {
    return { helpers: [...this.#helpers].sort() };
  }

  #bodyOf(plan: SchemaPlan): string {
    const test = this.#testOf(plan, 'value');
    if (test === 'true') return 'return ACCEPT;';
    if (test !== undefined) return `return ${test} ? ACCEPT : REJECT;`;
    switch (plan.kind) {
      case 'optional':
        return `return value === undefined ? ACCEPT : ${this.functionOf(plan.inner)}(value);`;
      case 'object':
        return this.#objectBody(plan.fields);
      case 'array':
        return this.#arrayBody(plan.element);
      case 'union':
        return this.#unionBody(plan.options);
      case 'record':
        this.#helpers.add('recordVerdict');
        return `return recordVerdict(value, ${this.functionOf(plan.key)}, ${this.functionOf(plan.value)});`;
      default:
        throw new Error(`a ${plan.kind} plan has a test and no body`);
    }
  }

  /**
   * A boolean expression of `value` for a plan that answers only ACCEPT or REJECT and needs no loop: the plan's test
   * written in place. Undefined for the other plans, which get a function.
   */
  #testOf(plan: SchemaPlan, value: string): string | undefined {
    switch (plan.kind) {
      case 'string': {
        const checks = plan.checks.map((check) => this.#stringTest(check, value)).filter((test) => test !== 'true');
        return [`typeof ${value} === 'string'`, ...checks].join(' && ');
      }
      case 'number': {
        // Number.isSafeInteger is false for anything but a finite number, so with it the type test goes.
        const safeint = plan.checks.some((check) => 'safeint' in check);
        // (TypeScript does not narrow by Number.isSafeInteger, hence the cast in the bounds after it.)
        const bounded = safeint ? `(${value} as number)` : value;
        const bounds = plan.checks.filter((check) => !('safeint' in check)).map((check) => numberTest(check, bounded));
        const type = safeint
          ? [`Number.isSafeInteger(${value})`]
          : [`typeof ${value} === 'number'`, `Number.isFinite(${value})`];
        return [...type, ...bounds].join(' && ');
      }
      case 'boolean':
        return `typeof ${value} === 'boolean'`;
      case 'unknown':
        return 'true';
      case 'custom':
        // Only a named predicate can be written, and the named ones are synchronous: never a promise (DEFER).
        if (typeof plan.predicate === 'function') throw new Error('a custom check written as a function has no name');
        return `(${WRITTEN_PREDICATES[plan.predicate](value)})`;
      case 'optional': {
        const inner = this.#testOf(plan.inner, value);
        if (inner === undefined || inner === 'true') return inner;
        return `(${value} === undefined || (${inner}))`;
      }
      default:
        return undefined;
    }
  }

  /**
   * A string check. A bound on code points is first tested on UTF-16 units, which settles nearly every string without
   * the helper's call: a string of n units holds n/2 to n code points, and one of at least one unit at least one.
   */
  #stringTest(check: StringCheck, value: string): string {
    if ('min' in check) {
      if (check.min <= 1) return check.min === 0 ? 'true' : `${value}.length >= 1`;
      return `(${value}.length >= ${check.min * 2} || ${this.#helper('hasMinCodePoints', `${value}, ${check.min}`)})`;
    }
    if ('max' in check)
      return `(${value}.length <= ${check.max} || ${this.#helper('hasMaxCodePoints', `${value}, ${check.max}`)})`;
    const key = JSON.stringify({ pattern: check.pattern, flags: check.flags });
    let name = this.#patterns.get(key);
    if (name === undefined) {
      name = `matchesPattern${this.#patterns.size}`;
      this.#patterns.set(key, name);
      this.#helpers.add('rememberingTest');
    }
    // rememberingTest tests a /g or /y pattern from the start, as zod (and compilePlan) do.
    return `${name}(${value})`;
  }

  #helper(name: PlanHelper, args: string): string {
    this.#helpers.add(name);
    return `${name}(${args})`;
  }

  /**
   * The statements that answer for one value: REJECT returns, DEFER is remembered in `verdict` (only where the plan
   * can answer DEFER: a union of strings and numbers, such as a timestamp, never does).
   */
  #check(plan: SchemaPlan, value: string): string {
    const test = this.#testOf(plan, value);
    if (test === 'true') return '';
    if (test !== undefined) return `if (!(${test})) return REJECT;`;
    if (!mayDefer(plan)) return `if (${this.functionOf(plan)}(${value}) === REJECT) return REJECT;`;
    return `result = ${this.functionOf(plan)}(${value});\nif (result === REJECT) return REJECT;\nif (result === DEFER) verdict = DEFER;`;
  }

  #objectBody(fields: readonly { key: string; plan: SchemaPlan; mayBeAbsent: boolean }[]): string {
    // zod's own object check, which predicates.ts already holds for the envelope's `data`; written in place, as is
    // copiesUnchanged's test (schema-plan.ts) at the end.
    const lines = [
      `if (!(${WRITTEN_PREDICATES.isDataObject('value')})) return REJECT;`,
      'const record = value as Record<string, unknown>;',
    ];
    let checks = fields.map((field) => this.#fieldCheck(field));
    const calls = checks.filter((check) => check.includes('result = ')).length;
    if (calls === 1) checks = checks.map((check) => check.replace('result = ', 'const result = '));
    if (calls > 0) lines.push('let verdict: Verdict = ACCEPT;');
    if (calls > 1) lines.push('let result: Verdict;');
    const defers = calls > 0;
    if (fields.length > 0) lines.push('let item: unknown;');
    lines.push(...checks);
    const unchanged = "Object.getPrototypeOf(record) === Object.prototype && !Object.hasOwn(record, '__proto__')";
    lines.push(
      defers
        ? `return verdict === ACCEPT && !(${unchanged}) ? DEFER : verdict;`
        : `return ${unchanged} ? ACCEPT : DEFER;`,
    );
    return lines.join('\n');
  }

  /**
   * One field: an absent key is skipped when the field may be absent and rejected when not, as `compilePlan` does; the
   * `in` test is left out where the field's own answer for `undefined` is already that.
   */
  #fieldCheck({ key, plan, mayBeAbsent }: { key: string; plan: SchemaPlan; mayBeAbsent: boolean }): string {
    const read = IDENTIFIER.test(key) ? `record.${key}` : `record[${JSON.stringify(key)}]`;
    const absent = `item === undefined && !(${JSON.stringify(key)} in record)`;
    const answerForUndefined = compilePlan(plan)(undefined);
    const check = this.#check(plan, 'item');
    if (mayBeAbsent) {
      if (answerForUndefined === ACCEPT) return `item = ${read};\n${check}`;
      return `item = ${read};\nif (!(${absent})) {\n${check}\n}`;
    }
    if (answerForUndefined === REJECT) return `item = ${read};\n${check}`;
    return `item = ${read};\nif (${absent}) return REJECT;\n${check}`;
  }

  #arrayBody(element: SchemaPlan): string {
    const prototype = 'Object.getPrototypeOf(value) === Array.prototype ? ACCEPT : DEFER';
    if (this.#testOf(element, 'item') === 'true')
      return `if (!Array.isArray(value)) return REJECT;\nreturn ${prototype};`;
    return [
      'if (!Array.isArray(value)) return REJECT;',
      `let verdict: Verdict = ${prototype};`,
      'for (let i = 0; i < value.length; i++) {',
      'const item: unknown = value[i];',
      this.#check(element, 'item').replace('result = ', 'const result = '),
      '}',
      'return verdict;',
    ].join('\n');
  }

  #unionBody(options: readonly SchemaPlan[]): string {
    // zod returns the first option without issues, so the first option that does not reject decides.
    const lines: string[] = [];
    for (const option of options) {
      const test = this.#testOf(option, 'value');
      // An option that accepts anything ends the union: the options after it are never reached.
      if (test === 'true') return [...lines, 'return ACCEPT;'].join('\n');
      if (test !== undefined) lines.push(`if (${test}) return ACCEPT;`);
      else lines.push(`{\nconst result = ${this.functionOf(option)}(value);\nif (result !== REJECT) return result;\n}`);
    }
    return [...lines, 'return REJECT;'].join('\n');
  }
}

/**
 * Whether a generated function for `plan` can answer DEFER: objects, arrays and records can (zod would copy them), and
 * what holds one of them; the rest answer ACCEPT or REJECT only (a custom check is a named, synchronous predicate here).
 */
function mayDefer(plan: SchemaPlan): boolean {
  switch (plan.kind) {
    case 'object':
    case 'array':
    case 'record':
      return true;
    case 'optional':
      return mayDefer(plan.inner);
    case 'union':
      return plan.options.some(mayDefer);
    default:
      return false;
  }
}

function numberTest(check: NumberCheck, value: string): string {
  if ('gte' in check) return `${value} >= ${check.gte}`;
  if ('gt' in check) return `${value} > ${check.gt}`;
  if ('lte' in check) return `${value} <= ${check.lte}`;
  if ('lt' in check) return `${value} < ${check.lt}`;
  return `Number.isSafeInteger(${value})`;
}
