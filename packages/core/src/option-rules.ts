import { KybWebhookError } from './errors.js';
import { describeValue, isPlainObject, listOf, suggestOption } from './option-words.js';

/**
 * Configuration checks shared by every public factory (receiver, adapters, stores): one small spec-driven checker
 * rather than zod, because its messages must name the option, say how to fix it, suggest the name that was meant,
 * and never repeat a value (an option's value may be a secret; only its kind, such as "a string" or "empty", is
 * ever shown).
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
 * {@link optionRules.required}. It returns what is wrong, as words that follow the option's name ("must be a
 * positive finite number, got a string"), or nothing; a rule for a nested value reports deeper problems through
 * `report`.
 *
 * @example
 * ```ts
 * const evenNumber: OptionRule = (value) =>
 *   typeof value === 'number' && value % 2 === 0 ? undefined : `must be an even number, got ${describeValue(value)}.`
 * ```
 */
export type OptionRule = ((value: unknown, path: string, report: ReportProblem) => string | undefined) & {
  /** Set by {@link optionRules.required}: what to do when the option is missing. */
  readonly missing?: string;
  /** Set by {@link optionRules.internal}: accepted but not listed among the options in messages. */
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

function withUnit(unit: string | undefined): string {
  return unit ? ` of ${unit}` : '';
}

/** The longest delay setTimeout keeps (2³¹ − 1 ms): what `optionRules.timerMs()` allows. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The hosts on which plain http stays on the machine: what `optionRules.secureUrl()` lets through without https. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Building blocks for {@link validateOptions}: each returns an {@link OptionRule}.
 *
 * @example
 * ```ts
 * validateOptions(options, {
 *   owner: 'createMyStore',
 *   example: 'createMyStore({ client })',
 *   options: {
 *     client: optionRules.required(optionRules.methods(['get', 'set'], 'pass a connected client'), 'pass a client'),
 *     prefix: optionRules.nonEmptyString('e.g. "kyb:"'),
 *     maxEntries: optionRules.positiveInteger(),
 *     onError: optionRules.func(),
 *   },
 * })
 * ```
 */
export const optionRules = {
  /** Marks a rule's option as required; `fix` says what to pass. */
  required(inner: OptionRule, fix: string): OptionRule {
    return rule((value, path, report) => inner(value, path, report), { missing: fix, internal: inner.internal });
  },
  /** Accepted as it is and not listed in messages (internal or test-only options). */
  internal(): OptionRule {
    return rule(() => undefined, { internal: true });
  },
  /** A finite number above zero, e.g. a timeout. */
  positiveNumber(unit?: string): OptionRule {
    return rule((value) =>
      typeof value === 'number' && Number.isFinite(value) && value > 0
        ? undefined
        : `must be a positive finite number${withUnit(unit)}, got ${describeValue(value)}.`,
    );
  },
  /**
   * A timer's delay in milliseconds: above zero and at most 2,147,483,647 (about 24.8 days), the longest delay
   * setTimeout keeps; a longer one fires after 1 ms in Node, which would turn "practically never" into "at once".
   */
  timerMs(): OptionRule {
    return rule((value) => {
      if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
        return `must be a positive finite number of milliseconds, got ${describeValue(value)}.`;
      return value > MAX_TIMER_MS
        ? `must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest delay a timer keeps), got ${value}.`
        : undefined;
    });
  },
  /**
   * A whole number of milliseconds from `min` that a timer is set with (a fetch's timeout, a polling interval): at
   * most 2,147,483,647, like {@link optionRules.timerMs}.
   */
  wholeTimerMs(min: number): OptionRule {
    return rule((value) =>
      typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= MAX_TIMER_MS
        ? undefined
        : `must be a whole number of milliseconds from ${min} to ${MAX_TIMER_MS} (about 24.8 days, the longest delay ` +
          `a timer keeps), got ${describeValue(value)}.`,
    );
  },
  /**
   * A wait in milliseconds that may be 0 (a backoff, a cap on a Retry-After): at most 2,147,483,647, like
   * {@link optionRules.timerMs}.
   */
  delayMs(): OptionRule {
    return optionRules.numberBetween(0, MAX_TIMER_MS, 'milliseconds');
  },
  /**
   * The URL of a service the library calls: absolute, https, or http on loopback only (127.0.0.1, localhost, [::1]).
   * `fix` names the URL wanted; `risk` says what plain http would expose, e.g. "which would send the API key in clear
   * text". Messages never repeat the URL: it can carry credentials.
   */
  secureUrl(fix: string, risk?: string): OptionRule {
    return rule((value) => {
      if (typeof value !== 'string' && !(value instanceof URL))
        return `must be a string or a URL: ${fix}; got ${describeValue(value)}.`;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return `is not an absolute URL: ${fix}.`;
      }
      if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
      return url.protocol === 'http:'
        ? `uses http: on a host that is not loopback${risk ? `, ${risk}` : ''}: ${fix}.`
        : `must be an https: URL: ${fix}.`;
    });
  },
  /** A whole number above zero, e.g. a count. */
  positiveInteger(unit?: string): OptionRule {
    return rule((value) =>
      typeof value === 'number' && Number.isSafeInteger(value) && value > 0
        ? undefined
        : `must be a positive whole number${withUnit(unit)}, got ${describeValue(value)}.`,
    );
  },
  /** A whole number of at least `min`, e.g. a count or a duration in milliseconds. */
  wholeNumber(min: number, unit?: string): OptionRule {
    return rule((value) =>
      typeof value === 'number' && Number.isSafeInteger(value) && value >= min
        ? undefined
        : `must be a whole number${withUnit(unit)} of at least ${min}, got ${describeValue(value)}.`,
    );
  },
  /** A finite number from `min` to `max`, both included. */
  numberBetween(min: number, max: number, unit?: string): OptionRule {
    return rule((value) =>
      typeof value === 'number' && value >= min && value <= max
        ? undefined
        : `must be a number${withUnit(unit)} from ${min} to ${max}, got ${describeValue(value)}.`,
    );
  },
  /** A string that is not empty or blank; `hint` says what it should be. */
  nonEmptyString(hint?: string): OptionRule {
    return rule((value) => {
      if (typeof value === 'string' && value.trim() !== '') return undefined;
      const fix = hint ? `: ${hint}` : '';
      if (typeof value === 'string') return `is ${value === '' ? 'empty' : 'blank'}${fix}.`;
      return `must be a string${fix}; got ${describeValue(value)}.`;
    });
  },
  /**
   * The path of a route, as the framework sees it: starts with '/', no query string or fragment (a request's path
   * never contains them, so such a route would never match) and no whitespace.
   */
  urlPath(): OptionRule {
    return rule((value) => {
      const fix = "a path starting with '/', e.g. '/webhooks/kyb'";
      if (typeof value !== 'string') return `must be ${fix}; got ${describeValue(value)}.`;
      if (!value.startsWith('/')) return `must start with '/': ${fix}.`;
      if (/[?#\s]/.test(value))
        return `must not contain '?', '#' or whitespace (a request path never does, so it would never match): ${fix}.`;
      return undefined;
    });
  },
  /** `true` or `false`. */
  boolean(): OptionRule {
    return rule((value) =>
      typeof value === 'boolean' ? undefined : `must be true or false, got ${describeValue(value)}.`,
    );
  },
  /** A function, e.g. a hook. */
  func(hint?: string): OptionRule {
    return rule((value) =>
      typeof value === 'function'
        ? undefined
        : `must be a function${hint ? ` (${hint})` : ''}, got ${describeValue(value)}.`,
    );
  },
  /** A function, or `false` to turn the feature off (e.g. the default logger). */
  funcOrFalse(hint?: string): OptionRule {
    return rule((value) =>
      typeof value === 'function' || value === false
        ? undefined
        : `must be a function${hint ? ` (${hint})` : ''} or false, got ${describeValue(value)}.`,
    );
  },
  /** Any object (class instances included). */
  object(hint?: string): OptionRule {
    return rule((value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? undefined
        : `must be an object${hint ? ` (${hint})` : ''}, got ${describeValue(value)}.`,
    );
  },
  /** A plain object whose own options are checked by `fields` (unknown names included). */
  fields(spec: FieldsSpec, hint?: string): OptionRule {
    return rule((value, path, report) => {
      if (!isPlainObject(value)) return `must be an object${hint ? ` (${hint})` : ''}, got ${describeValue(value)}.`;
      checkFields(value, spec, path, report);
      return undefined;
    });
  },
  /**
   * An object with these methods (a client, a store); `fix` says what to pass. The message names the methods that
   * are missing.
   */
  methods(names: readonly string[], fix: string): OptionRule {
    return rule((value) => {
      if ((typeof value !== 'object' && typeof value !== 'function') || value === null || isThenable(value)) {
        return `must be an object with ${listOf(names)} methods: ${fix}; got ${describeValue(value)}.`;
      }
      const missing = names.filter((name) => typeof (value as Record<string, unknown>)[name] !== 'function');
      if (missing.length === 0) return undefined;
      return `has no ${listOf(missing, 'or')} method${missing.length > 1 ? 's' : ''}: ${fix}.`;
    });
  },
  /**
   * A value that `parse` accepts: its `config_invalid` error becomes the problem (so an existing parser, such as a
   * table name check, keeps one set of rules).
   */
  parsedBy(parse: (value: never) => unknown): OptionRule {
    return rule((value) => {
      try {
        parse(value as never);
        return undefined;
      } catch (error) {
        if (error instanceof KybWebhookError && error.code === 'config_invalid') return `is invalid: ${error.message}`;
        return 'is invalid.';
      }
    });
  },
  /** A receiver from `createReceiver`, as adapters take it. */
  receiver(): OptionRule {
    return rule((value) => {
      const candidate = value as Partial<Record<'receive' | 'reject' | 'maxBodyBytes', unknown>> | null;
      if (
        typeof candidate === 'object' &&
        candidate !== null &&
        typeof candidate.receive === 'function' &&
        typeof candidate.reject === 'function' &&
        typeof candidate.maxBodyBytes === 'number'
      ) {
        return undefined;
      }
      const fix = 'pass the receiver that createReceiver({ secrets, attestation }) returns';
      if (typeof value === 'function')
        return `is a function, not a receiver: ${fix} (call createReceiver, do not pass it).`;
      if (isPlainObject(value) && ('secrets' in value || 'attestation' in value)) {
        return `looks like receiver options, not a receiver: ${fix}, i.e. createReceiver(options).`;
      }
      return `is not a receiver (it needs receive, reject and maxBodyBytes): ${fix}; got ${describeValue(value)}.`;
    });
  },
} as const;

function isThenable(value: object): boolean {
  return typeof (value as { then?: unknown }).then === 'function';
}
