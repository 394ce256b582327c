import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, MAX_STORE_DURATION_MS, type DedupeStore } from './store/dedupe.js';
import { KybWebhookError } from './errors.js';
import type { ReceiverOptions } from './receiver.js';
import { isStreamCursorStore } from './store/stream-store.js';

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
    throw configError(spec.owner, [`${spec.owner} needs an options object, e.g. ${spec.example}; got ${describeValue(options)}.`]);
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

function checkFields(values: Record<string, unknown>, spec: FieldsSpec, prefix: string, report: ReportProblem): void {
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

/**
 * The option a misspelt or foreign option name most likely meant: an alias (another library's name for it), the
 * same name in another case or spelling (`max_body_bytes`), or the closest known name within a small edit distance.
 *
 * @example
 * ```ts
 * suggestOption('pth', ['path', 'onResult']) // 'path'
 * suggestOption('bodyLimit', ['maxBodyBytes'], { bodyLimit: 'maxBodyBytes' }) // 'maxBodyBytes'
 * suggestOption('colour', ['path']) // undefined
 * ```
 */
export function suggestOption(name: string, known: readonly string[], aliases: Record<string, string> = {}): string | undefined {
  const wanted = normalizeName(name);
  for (const [alias, target] of Object.entries(aliases)) if (normalizeName(alias) === wanted) return target;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const option of known) {
    const candidate = normalizeName(option);
    const distance = editDistance(wanted, candidate);
    // A third of the shorter name: `pth` → `path` and `onResults` → `onResult`, but not `now` → `store`.
    const allowed = Math.max(1, Math.floor(Math.min(wanted.length, candidate.length) / 3));
    if (distance <= allowed && distance < bestDistance) {
      best = option;
      bestDistance = distance;
    }
  }
  return best;
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours. Names whose
 * lengths differ by more than 8 are never a near miss, so they answer Infinity without the quadratic work.
 *
 * @example
 * ```ts
 * editDistance('relaesed', 'released') // 1 (one swap)
 * editDistance('archived', 'released') // 6
 * ```
 */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Number.POSITIVE_INFINITY;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * How a value is shown in a message: its kind, never its content (an option's value may be a secret).
 *
 * @example
 * ```ts
 * describeValue('whsec_…')           // 'a string'
 * describeValue(Number.NaN)           // 'NaN'
 * describeValue(new Date('24h'))      // 'an Invalid Date'
 * describeValue(Promise.resolve(1))   // 'a Promise (missing await?)'
 * ```
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return value.length === 0 ? 'an empty string' : value.trim() === '' ? 'a blank string' : 'a string';
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      return value === 0 ? 'zero' : value < 0 ? 'a negative number' : Number.isInteger(value) ? 'a number' : 'a fraction';
    case 'boolean':
      return 'a boolean';
    case 'bigint':
      return 'a bigint';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
  }
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an Invalid Date' : 'a Date';
  if (typeof (value as { then?: unknown }).then === 'function') return 'a Promise (missing await?)';
  if (isPlainObject(value)) return 'an object';
  const constructorName = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof constructorName === 'string' && /^[A-Za-z_$][\w$]{0,40}$/.test(constructorName)
    ? `an instance of ${constructorName}`
    : 'an object';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // Object.prototype of this realm or another one (a vm context, a test environment), or no prototype at all.
  return proto === null || Object.getPrototypeOf(proto) === null;
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

function rule(
  check: (value: unknown, path: string, report: ReportProblem) => string | undefined,
  flags: { missing?: string; internal?: boolean } = {},
): OptionRule {
  return Object.assign(check, flags);
}

function withUnit(unit: string | undefined): string {
  return unit ? ` of ${unit}` : '';
}

/** The longest delay setTimeout keeps (2³¹ − 1 ms): what `optionRules.timerMs()` allows. */
const MAX_TIMER_MS = 2_147_483_647;

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
      if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) return `must be a positive finite number of milliseconds, got ${describeValue(value)}.`;
      return value > MAX_TIMER_MS ? `must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest delay a timer keeps), got ${value}.` : undefined;
    });
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
      if (typeof value !== 'string' && !(value instanceof URL)) return `must be a string or a URL: ${fix}; got ${describeValue(value)}.`;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return `is not an absolute URL: ${fix}.`;
      }
      if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
      return url.protocol === 'http:' ? `uses http: on a host that is not loopback${risk ? `, ${risk}` : ''}: ${fix}.` : `must be an https: URL: ${fix}.`;
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
      if (/[?#\s]/.test(value)) return `must not contain '?', '#' or whitespace (a request path never does, so it would never match): ${fix}.`;
      return undefined;
    });
  },
  /** `true` or `false`. */
  boolean(): OptionRule {
    return rule((value) => (typeof value === 'boolean' ? undefined : `must be true or false, got ${describeValue(value)}.`));
  },
  /** A function, e.g. a hook. */
  func(hint?: string): OptionRule {
    return rule((value) => (typeof value === 'function' ? undefined : `must be a function${hint ? ` (${hint})` : ''}, got ${describeValue(value)}.`));
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
      if (typeof value === 'function') return `is a function, not a receiver: ${fix} (call createReceiver, do not pass it).`;
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

function listOf(names: readonly string[], last = 'and'): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} ${last} ${names.at(-1)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// createReceiver

/**
 * Default of `handlerTimeoutMs`: how long a handler may run before the delivery is answered 5xx.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, leaseMs: 2 * DEFAULT_HANDLER_TIMEOUT_MS }) // a longer lease, the default handler deadline
 * ```
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;
/**
 * Default of `storeTimeoutMs`: how long one dedupe store call may take before it counts as failed.
 *
 * @example
 * ```ts
 * const minimumLeaseMs = DEFAULT_HANDLER_TIMEOUT_MS + 2 * DEFAULT_STORE_TIMEOUT_MS + 1 // what leaseMs must exceed
 * ```
 */
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;

/** The kv of the signature header; the same rule as the signature check's. */
const SECRET_VERSION = /^[A-Za-z0-9._-]{1,64}$/;
const SECRETS_EXAMPLE = "secrets: { '3': process.env.KYB_SECRET_V3 }";
const ENV_UNSET = 'the environment variable it is read from is probably unset';

const notAfterRule = rule((value) => {
  const fix = 'pass a Date or Unix milliseconds, e.g. `notAfter: Date.now() + 24 * 3600_000`';
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? `is an Invalid Date, so this version would never end: ${fix}.` : undefined;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : `is ${describeValue(value)}, so this version would never end: ${fix}.`;
  }
  if (typeof value === 'string') {
    return `is a string, which is not parsed (a duration such as '24h' would never end the version): ${fix}, or \`new Date('2026-01-02T00:00:00Z')\`.`;
  }
  return `must be a Date or Unix milliseconds, got ${describeValue(value)}: ${fix}.`;
});

function secretValueProblem(value: unknown): string | undefined {
  if (typeof value === 'string') {
    if (value.length === 0) return `is empty: ${ENV_UNSET} or empty. Set it from the dashboard, or remove this version.`;
    if (value.trim() === '') return 'is blank (whitespace only): set the secret shown in the dashboard, or remove this version.';
    // No dashboard secret begins or ends with whitespace; a newline from a secrets file or a pasted space would make
    // every delivery of this version fail with signature_mismatch, far from its cause.
    if (value.trim() !== value) {
      return 'has leading or trailing whitespace (a newline read from a secrets file, a space pasted with it): trim it, e.g. `process.env.KYB_SECRET_V1?.trim()`.';
    }
    return undefined;
  }
  if (value === undefined || value === null) {
    return `is ${describeValue(value)}: ${ENV_UNSET}. Set it from the dashboard, or remove this version.`;
  }
  return undefined;
}

const secretVersionFields: FieldsSpec = {
  options: {
    secret: rule((value) => secretValueProblem(value) ?? (typeof value === 'string' ? undefined : `must be a string (the endpoint secret), got ${describeValue(value)}.`), {
      missing: `${ENV_UNSET}. Set it from the dashboard, or remove this version.`,
    }),
    notAfter: notAfterRule,
  },
  aliases: { value: 'secret', key: 'secret', expires: 'notAfter', expiresAt: 'notAfter', validUntil: 'notAfter', until: 'notAfter', notAfterMs: 'notAfter', expiry: 'notAfter' },
};

const secretsRule = rule((value, path, report) => {
  if (!isPlainObject(value)) {
    const hint = typeof value === 'string' ? ' (one secret needs its version as the key)' : '';
    return `must be an object of secret versions${hint}, e.g. \`${SECRETS_EXAMPLE}\`; got ${describeValue(value)}.`;
  }
  const versions = Object.keys(value);
  if (versions.length === 0) {
    return `is empty, which would turn the HMAC check off: add a version (\`${SECRETS_EXAMPLE}\`), or remove \`secrets\` to verify attestations only.`;
  }
  versions.forEach((version, index) => {
    // A key that is not a version may be a secret pasted in the wrong place, so it is described, never shown.
    if (!SECRET_VERSION.test(version)) {
      report(
        path,
        `has a key (the ${ordinal(index + 1)}, not shown) that is not a secret version: a version is the kv of the signature header, ` +
          `1 to 64 letters, digits, '.', '_' or '-', e.g. '3'. Put the secret in the value: \`${SECRETS_EXAMPLE}\`.`,
      );
      return;
    }
    // Versions are short ('3', 'v2', '2026-01'); a long key is described by its position, in case it is a secret.
    const entryPath = version.length <= 20 ? `${path}['${version}']` : `${path}[<the ${ordinal(index + 1)} key>]`;
    const entry = value[version];
    if (isPlainObject(entry)) {
      checkFields(entry, secretVersionFields, entryPath, report);
      return;
    }
    const problem =
      secretValueProblem(entry) ??
      (typeof entry === 'string' ? undefined : `must be the secret (a string) or { secret, notAfter }, got ${describeValue(entry)}.`);
    if (problem !== undefined) report(entryPath, problem);
  });
  return undefined;
});

// What every store can write (MySQL's DATETIME ends in 9999): a longer value failed, or was stored already expired,
// only when the first delivery completed.
const storeDurationRule = rule((value) => {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) return `must be a positive finite number of milliseconds, got ${describeValue(value)}.`;
  return value > MAX_STORE_DURATION_MS ? `must be at most ${MAX_STORE_DURATION_MS} ms (100 years), the longest every store can keep, got ${value}.` : undefined;
});

const jwksUrlRule = optionRules.secureUrl('use {base_url}/.well-known/kyb-jwks.json, an https: URL (http: only on 127.0.0.1, localhost or [::1])');

const jwksRule = rule((value) =>
  isPlainObject(value) && Array.isArray(value.keys)
    ? undefined
    : `must be a JSON Web Key Set, { keys: [...] } (or use \`jwksUrl\`), got ${describeValue(value)}.`,
);

const attestationFields: FieldsSpec = {
  options: {
    issuer: optionRules.required(
      optionRules.nonEmptyString('set it to the {attestation_issuer} of the KYB service'),
      'set it to the {attestation_issuer} of the KYB service (an unset environment variable?).',
    ),
    audience: optionRules.required(
      optionRules.nonEmptyString("set it to your client domain UUID (the attestations' aud)"),
      "set it to your client domain UUID, the attestations' aud (an unset environment variable?).",
    ),
    jwksUrl: jwksUrlRule,
    jwks: jwksRule,
    leewaySeconds: optionRules.numberBetween(0, 60, 'seconds'),
    // The same bounds as the key source's own checks (attestation.ts), which also relate jwksMaxStaleMs to
    // jwksCacheMaxAgeMs; that rule stays there, beside the defaults it needs.
    jwksCooldownMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksCacheMaxAgeMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksTimeoutMs: optionRules.wholeNumber(1, 'milliseconds'),
    jwksMaxStaleMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksMaxBytes: optionRules.wholeNumber(1, 'bytes'),
    fetch: optionRules.func('a fetch implementation'),
    answersClaim: optionRules.nonEmptyString("the name of the claim that holds a release's answers, e.g. 'answers'"),
  },
  aliases: {
    iss: 'issuer',
    aud: 'audience',
    audiences: 'audience',
    clientId: 'audience',
    jwksUri: 'jwksUrl',
    jwks_uri: 'jwksUrl',
    jwksEndpoint: 'jwksUrl',
    url: 'jwksUrl',
    keySet: 'jwks',
    keys: 'jwks',
    leeway: 'leewaySeconds',
    clockTolerance: 'leewaySeconds',
    clockSkew: 'leewaySeconds',
    tolerance: 'leewaySeconds',
    cooldownDuration: 'jwksCooldownMs',
    cacheMaxAge: 'jwksCacheMaxAgeMs',
    timeoutDuration: 'jwksTimeoutMs',
    timeout: 'jwksTimeoutMs',
  },
  refine(values, report, at) {
    const hasUrl = values.jwksUrl !== undefined;
    const hasSet = values.jwks !== undefined;
    if (hasUrl && hasSet) {
      report(at('jwksUrl'), `and \`${at('jwks')}\` are both set: keep one (jwksUrl fetches the KYB JWKS; jwks is an inline key set).`);
    } else if (!hasUrl && !hasSet) {
      report(at('jwksUrl'), `is missing: set it to {base_url}/.well-known/kyb-jwks.json (or set \`${at('jwks')}\` to an inline key set).`);
    }
  },
};

const ORDERING_MODES = ['off', 'detect', 'enforce'] as const;
const orderingFields: FieldsSpec = {
  options: {
    mode: optionRules.required(
      rule((value) =>
        (ORDERING_MODES as readonly unknown[]).includes(value)
          ? undefined
          : `must be 'off', 'detect' or 'enforce', got ${describeValue(value)}.`,
      ),
      "set it to 'off', 'detect' (report gaps) or 'enforce' (handlers see each stream in seq order)",
    ),
    firstSeq: rule((value) =>
      value === 0 || value === 1
        ? undefined
        : `must be 0 or 1 (the seq a stream starts at; the spec does not say which, the default is 0), got ${describeValue(value)}.`,
    ),
    fetchEventsAfter: optionRules.func('(streamId, afterSeq, signal) => AsyncIterable of envelopes, e.g. (s, a, signal) => client.events(s, { afterSeq: a, signal })'),
    backfillTimeoutMs: optionRules.timerMs(),
    cursorRetainMs: storeDurationRule,
    // An hour at most: a gap remembered longer would hold a stream well after the API can fill it.
    backfillRetryAfterMs: rule((value) =>
      typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 3_600_000
        ? undefined
        : `must be a whole number of milliseconds from 0 (ask every time) to 3600000 (an hour); the default is 5000. Got ${describeValue(value)}.`,
    ),
    onUnfillable: optionRules.func("(report, event) => 'wait' | { skip: '<why, who decided>' }, called for an earlier event the API can never serve verifiably"),
  },
  aliases: { cursorRetentionMs: 'cursorRetainMs', cursorTtlMs: 'cursorRetainMs', cursorTtl: 'cursorRetainMs', retainCursorMs: 'cursorRetainMs', backfillTimeout: 'backfillTimeoutMs', backfillTimeoutMS: 'backfillTimeoutMs', timeoutMs: 'backfillTimeoutMs', ordering: 'mode', order: 'mode', startSeq: 'firstSeq', seqBase: 'firstSeq', initialSeq: 'firstSeq', fetch: 'fetchEventsAfter', fetchEvents: 'fetchEventsAfter', backfill: 'fetchEventsAfter', eventsAfter: 'fetchEventsAfter', backfillRetryMs: 'backfillRetryAfterMs', retryAfterMs: 'backfillRetryAfterMs', backfillCooldownMs: 'backfillRetryAfterMs', onUnfillableGap: 'onUnfillable', onSkip: 'onUnfillable', onStall: 'onUnfillable' },
  refine(values, report, at) {
    if (values.mode === 'enforce' && values.fetchEventsAfter === undefined) {
      report(
        at('fetchEventsAfter'),
        "is missing: mode 'enforce' backfills gaps through it; pass (s, a, signal) => client.events(s, { afterSeq: a, signal }) with a client from " +
          "@kyb-webhooks/client (or use mode 'detect').",
      );
    }
    if (values.onUnfillable !== undefined && values.mode !== 'enforce') {
      report(at('onUnfillable'), "is only called under mode 'enforce', which backfills: remove it, or set mode: 'enforce'.");
    }
  },
};

const RECEIVER_SPEC: OptionsSpec = {
  owner: 'createReceiver',
  example:
    "createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3 }, attestation: { issuer, audience, jwksUrl } })",
  options: {
    secrets: secretsRule,
    attestation: optionRules.fields(attestationFields, 'issuer, audience and jwksUrl'),
    store: optionRules.methods(
      ['claim', 'complete', 'release'],
      'a dedupe store implements claim, complete and release (DedupeStore); use createMemoryStore(), createRedisStore() or a SQL store',
    ),
    toleranceSeconds: optionRules.positiveNumber('seconds'),
    maxBodyBytes: optionRules.positiveNumber('bytes'),
    leaseMs: storeDurationRule,
    retainMs: storeDurationRule,
    handlerTimeoutMs: optionRules.timerMs(),
    storeTimeoutMs: optionRules.timerMs(),
    now: optionRules.func('a clock in milliseconds, like Date.now'),
    logger: optionRules.funcOrFalse('called with each log entry; false silences the default console logger'),
    ordering: optionRules.fields(orderingFields, "e.g. { mode: 'enforce', fetchEventsAfter }"),
    crypto: optionRules.internal(),
  },
  aliases: {
    order: 'ordering',
    orderBy: 'ordering',
    streamOrder: 'ordering',
    secret: 'secrets',
    signingSecret: 'secrets',
    signingSecrets: 'secrets',
    webhookSecret: 'secrets',
    endpointSecret: 'secrets',
    hmacSecret: 'secrets',
    hmacSecrets: 'secrets',
    keyring: 'secrets',
    attest: 'attestation',
    jwt: 'attestation',
    issuer: 'attestation.issuer',
    audience: 'attestation.audience',
    jwksUrl: 'attestation.jwksUrl',
    jwksUri: 'attestation.jwksUrl',
    jwks: 'attestation.jwks',
    leeway: 'attestation.leewaySeconds',
    leewaySeconds: 'attestation.leewaySeconds',
    clockTolerance: 'attestation.leewaySeconds',
    tolerance: 'toleranceSeconds',
    toleranceInSeconds: 'toleranceSeconds',
    timestampTolerance: 'toleranceSeconds',
    maxBodySize: 'maxBodyBytes',
    bodyLimit: 'maxBodyBytes',
    bodySizeLimit: 'maxBodyBytes',
    maxBodyLength: 'maxBodyBytes',
    maxPayloadSize: 'maxBodyBytes',
    limit: 'maxBodyBytes',
    dedupeStore: 'store',
    storage: 'store',
    lease: 'leaseMs',
    leaseDuration: 'leaseMs',
    retain: 'retainMs',
    retention: 'retainMs',
    retentionMs: 'retainMs',
    timeout: 'handlerTimeoutMs',
    handlerTimeout: 'handlerTimeoutMs',
    storeTimeout: 'storeTimeoutMs',
    clock: 'now',
    log: 'logger',
    onLog: 'logger',
  },
  refine(values, report) {
    if (values.secrets === undefined && values.attestation === undefined) {
      report(
        'secrets',
        'and `attestation` are both missing: set `secrets` (HMAC keyring by kv version), `attestation` (issuer, audience, jwksUrl) ' +
          'or both; a receiver with neither would accept forged deliveries.',
      );
    }
    const ordering = values.ordering as { mode?: unknown; cursorRetainMs?: unknown } | undefined;
    const store = values.store as DedupeStore | undefined;
    const retainMs = (values.retainMs as number | undefined) ?? DEFAULT_RETAIN_MS;
    if (typeof ordering?.cursorRetainMs === 'number' && ordering.cursorRetainMs < retainMs) {
      report(
        'ordering.cursorRetainMs',
        `(${ordering.cursorRetainMs} ms) must be at least retainMs (${retainMs} ms): a cursor that expires before its stream's ` +
          'records makes the next event look like a new stream; raise it, or leave it out for 400 days.',
      );
    }
    if ((ordering?.mode === 'detect' || ordering?.mode === 'enforce') && store !== undefined && !isStreamCursorStore(store)) {
      report(
        'store',
        `keeps no stream cursors (getCursor, completeInOrder, advanceCursor), which ordering mode '${ordering.mode}' needs: use a ` +
          "built-in store (createMemoryStore, createRedisStore or a SQL store), implement StreamCursorStore, or set ordering.mode to 'off'.",
      );
    }
    if (ordering?.mode === 'enforce' && (ordering as { onUnfillable?: unknown }).onUnfillable !== undefined && store !== undefined && isStreamCursorStore(store) && typeof store.skipSeq !== 'function') {
      report(
        'store',
        'has no skipSeq, which ordering.onUnfillable needs to record a skip with its reason: use a built-in store ' +
          '(createMemoryStore, createRedisStore or a SQL store), implement skipSeq, or remove onUnfillable.',
      );
    }
    const leaseMs = (values.leaseMs as number | undefined) ?? DEFAULT_LEASE_MS;
    const handlerMs = (values.handlerTimeoutMs as number | undefined) ?? DEFAULT_HANDLER_TIMEOUT_MS;
    const storeMs = (values.storeTimeoutMs as number | undefined) ?? DEFAULT_STORE_TIMEOUT_MS;
    if (!(handlerMs + 2 * storeMs < leaseMs)) {
      report(
        'leaseMs',
        `(${leaseMs} ms) must be longer than handlerTimeoutMs + 2 × storeTimeoutMs (${handlerMs} + 2 × ${storeMs} ms), so that ` +
          'no other delivery can take the event over while this one may still run its handler or settle it: raise leaseMs or lower the timeouts.',
      );
    }
  },
};

/**
 * Checks the options of `createReceiver` and throws `config_invalid` naming every mistake and its fix: a missing or
 * empty secret (an unset environment variable), a `notAfter` that would never end a version, `secrets: {}`, an
 * attestation without issuer, audience or key source, a store without its methods, limits that are not positive
 * numbers, a lease shorter than the handler and store deadlines, and unknown option names (with "did you mean").
 * `createReceiver` calls it first; it is exported for wrappers that build receiver options themselves.
 *
 * @example
 * ```ts
 * validateReceiverOptions({ secrets: { '3': process.env.KYB_SECRET_V3 } })
 * // KYB_SECRET_V3 unset → KybWebhookError config_invalid:
 * // "createReceiver: `secrets['3']` is undefined: the environment variable it is read from is probably unset. …"
 * ```
 */
export function validateReceiverOptions(options: unknown): asserts options is ReceiverOptions {
  validateOptions(options, RECEIVER_SPEC);
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
