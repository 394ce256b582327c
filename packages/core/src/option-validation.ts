import { KybWebhookError } from './errors.js';
import { describeValue, isPlainObject, suggestOption } from './option-words.js';

/*
 * Configuration checks shared by every public factory (receiver, adapters, stores): one small spec-driven checker
 * rather than zod, because its messages must name the option, say how to fix it, suggest the name that was meant,
 * and never repeat a value (an option's value may be a secret; only its kind, such as "a string" or "empty", is
 * ever shown). The rules it applies, one per kind of option, are in option-rules.ts.
 */

/**
 * Reports a problem found below the checked value, e.g. in one entry of `secrets`.
 *
 * @example
 * ```ts
 * const listOfUrls: OptionRule = (value, path, report) => {
 *   if (!Array.isArray(value)) return `must be an array, got ${describeValue(value)}.`
 *   value.forEach((item, i) => { if (typeof item !== 'string') report(`${path}[${i}]`, 'must be a URL string.') })
 *   return undefined
 * }
 * ```
 */
export type ReportProblem = (path: string, problem: string) => void;

/**
 * The rule for one option. It is called only when the option is present (not `undefined`), unless it was made
 * `optionRules.required` (option-rules.ts). It returns what is wrong, as words that follow the option's name
 * ("must be a positive finite number, got a string"), or nothing; a rule for a nested value reports deeper problems
 * through `report`.
 *
 * @example
 * ```ts
 * const evenNumber: OptionRule = (value) =>
 *   typeof value === 'number' && value % 2 === 0 ? undefined : `must be an even number, got ${describeValue(value)}.`
 * ```
 */
export type OptionRule = ((value: unknown, path: string, report: ReportProblem) => string | undefined) & {
  /** Set by `optionRules.required`: what to do when the option is missing. */
  readonly missing?: string;
  /** Set by `optionRules.internal`: accepted but not listed among the options in messages. */
  readonly internal?: boolean;
};

/**
 * The options of one object: a rule per option (any other name is refused as unknown), the names other libraries
 * use for them (for "did you mean"), and rules across options.
 *
 * @example
 * ```ts
 * const fields: FieldsSpec = {
 *   options: { prefix: optionRules.nonEmptyString() },
 *   aliases: { keyPrefix: 'prefix' },
 * }
 * ```
 */
export interface FieldsSpec {
  /** A rule per option; any other option name is a problem. */
  options: Record<string, OptionRule>;
  /** Names used elsewhere → the option meant (a dotted path may point elsewhere, e.g. `attestation.leewaySeconds`). */
  aliases?: Record<string, string>;
  /**
   * Rules across options (e.g. "exactly one of `pool` and `client`"). Runs once every option passed its own rule;
   * `at(name)` gives an option's full path for messages.
   */
  refine?: (options: Record<string, unknown>, report: ReportProblem, at: (name: string) => string) => void;
}

/**
 * What {@link validateOptions} checks: the options of one factory.
 *
 * @example
 * ```ts
 * const spec: OptionsSpec = {
 *   owner: 'createMyStore',
 *   example: 'createMyStore({ client })',
 *   options: { client: optionRules.required(optionRules.methods(['get', 'set']), 'pass a connected client') },
 * }
 * ```
 */
export interface OptionsSpec extends FieldsSpec {
  /** The factory the options belong to, named in every message, e.g. `createRedisStore`. */
  owner: string;
  /** A correct call, shown when the options are not an object at all. */
  example: string;
  /** The options parameter may be left out (`undefined` stands for `{}`). Default false. */
  optional?: boolean;
}

/**
 * Checks the options of a factory and throws a {@link KybWebhookError} with code `config_invalid` that lists every
 * problem: the option's path, what is wrong, how to fix it, and "did you mean" for unknown names that are close to
 * a known one or are another library's name for it. Call it first thing in a factory, so a mistake fails at
 * creation rather than on the first delivery. Messages never contain an option's value.
 *
 * @example
 * ```ts
 * export function createMyStore(options: MyStoreOptions): DedupeStore {
 *   validateOptions(options, {
 *     owner: 'createMyStore',
 *     example: 'createMyStore({ client: new Client(url) })',
 *     options: {
 *       client: optionRules.required(optionRules.methods(['get', 'set']), 'pass a connected client'),
 *       ttlMs: optionRules.positiveNumber('milliseconds'),
 *     },
 *     aliases: { ttl: 'ttlMs' },
 *   })
 *   // …
 * }
 * ```
 */
export function validateOptions(options: unknown, spec: OptionsSpec): void {
  if (options === undefined && spec.optional) return;
  if (!isPlainObject(options)) {
    throw configError(spec.owner, [
      `${spec.owner} needs an options object, e.g. ${spec.example}; got ${describeValue(options)}.`,
    ]);
  }
  const problems: string[] = [];
  checkFields(options, spec, '', (path, problem) => problems.push(`\`${path}\` ${problem}`));
  if (problems.length > 0) throw configError(spec.owner, problems);
}

/**
 * Checks one positional argument of a factory (such as the `receiver` of an adapter) with an {@link OptionRule},
 * and throws `config_invalid` naming it.
 *
 * @example
 * ```ts
 * validateArgument('kybWebhooks (@kyb-webhooks/express)', 'receiver', receiver, optionRules.receiver())
 * ```
 */
export function validateArgument(owner: string, name: string, value: unknown, rule: OptionRule): void {
  const problems: string[] = [];
  const report: ReportProblem = (path, problem) => problems.push(`\`${path}\` ${problem}`);
  if (value === undefined) {
    report(name, `is missing${rule.missing ? `: ${rule.missing}` : '.'}`);
  } else {
    const problem = rule(value, name, report);
    if (problem !== undefined) report(name, problem);
  }
  if (problems.length > 0) throw configError(owner, problems);
}

/** Checks the options of one object against `spec`; for receiver-options.ts, which checks nested entries with it. */
export function checkFields(
  values: Record<string, unknown>,
  spec: FieldsSpec,
  prefix: string,
  report: ReportProblem,
): void {
  const at = (name: string): string => prefix + pathSegment(name, prefix === '');
  let problems = 0;
  const counted: ReportProblem = (path, problem) => {
    problems++;
    report(path, problem);
  };
  for (const name of Object.keys(values)) {
    const rule = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    if (!rule) {
      counted(at(name), unknownOption(name, spec, prefix));
      continue;
    }
    const value = values[name];
    if (value === undefined) continue;
    const problem = rule(value, at(name), counted);
    if (problem !== undefined) counted(at(name), problem);
  }
  for (const [name, rule] of Object.entries(spec.options)) {
    if (rule.missing !== undefined && values[name] === undefined) counted(at(name), `is missing: ${rule.missing}`);
  }
  // Cross-option rules assume every option has the right kind; they speak only once those are fixed.
  if (problems === 0 && spec.refine) spec.refine(values, counted, at);
}

function unknownOption(name: string, spec: FieldsSpec, prefix: string): string {
  const meant = suggestOption(name, Object.keys(spec.options), spec.aliases);
  if (meant !== undefined) {
    const target = meant.includes('.') || prefix === '' ? meant : prefix + pathSegment(meant, false);
    return `is not an option: did you mean \`${target}\`?`;
  }
  const listed = Object.entries(spec.options)
    .filter(([, rule]) => !rule.internal)
    .map(([option]) => option);
  return `is not an option; the options are ${listed.join(', ')}.`;
}

/** `name` as a path segment: `.name` for identifiers, `['name']` otherwise, shortened and escaped for messages. */
function pathSegment(name: string, first: boolean): string {
  if (/^[A-Za-z_$][\w$]*$/.test(name) && name.length <= 64) return first ? name : `.${name}`;
  const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return `[${JSON.stringify(shown).replace(/^"|"$/g, "'").replace(/`/g, '\\`')}]`;
}

function configError(owner: string, problems: readonly string[]): KybWebhookError {
  const message =
    problems.length === 1
      ? problems[0]!.startsWith(owner)
        ? problems[0]!
        : `${owner}: ${problems[0]}`
      : `${owner}: ${problems.length} configuration problems:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`;
  return new KybWebhookError('config_invalid', message);
}

/** An {@link OptionRule} from a check and its flags; for receiver-options.ts, whose rules are built the same way. */
export function rule(
  check: (value: unknown, path: string, report: ReportProblem) => string | undefined,
  flags: { missing?: string; internal?: boolean } = {},
): OptionRule {
  return Object.assign(check, flags);
}
