/*
 * The rules of the option checker (option-validation.ts), one per kind of option: each returns an OptionRule whose
 * message says what the option must be and never repeats its value.
 */
import { KybWebhookError } from './errors.js';
import { describeValue, isPlainObject, listOf } from './option-words.js';
import { checkFields, rule, type FieldsSpec, type OptionRule } from './option-validation.js';

function withUnit(unit: string | undefined): string {
  return unit ? ` of ${unit}` : '';
}

/** The longest delay setTimeout keeps (2³¹ − 1 ms): what `optionRules.timerMs()` allows. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The hosts on which plain http stays on the machine: what `optionRules.secureUrl()` lets through without https. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a string read from a secrets file or an environment variable is refused when whitespace surrounds it: no
 * secret, issuer or audience of the service has any, so the value would never match, and every delivery would be
 * refused far from its cause. `example` shows the trim. The message never repeats the value.
 *
 * @example
 * ```ts
 * strayWhitespaceProblem('abc\n', 'process.env.KYB_AUDIENCE?.trim()') // 'has leading or trailing whitespace (…) …'
 * ```
 */
export function strayWhitespaceProblem(value: string, example: string): string | undefined {
  return value.trim() === value
    ? undefined
    : `has leading or trailing whitespace (a newline read from a secrets file, a space pasted with it): trim it, e.g. \`${example}\`.`;
}

/**
 * Building blocks for `validateOptions` (option-validation.ts): each returns an {@link OptionRule}.
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
   * The URL of a service the library calls: absolute, https, or http on loopback only (127.0.0.1, localhost, [::1]),
   * and without credentials (`user:password@`): the library sends what it needs in headers, and fetch quotes a URL
   * with credentials whole in its error, which reaches logs and telemetry. `fix` names the URL wanted; `risk` says what
   * plain http would expose, e.g. "which would send the API key in clear text". Messages never repeat the URL.
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
      if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname))
        return `uses http: on a host that is not loopback${risk ? `, ${risk}` : ''}: ${fix}.`;
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an https: URL: ${fix}.`;
      return url.username === '' && url.password === ''
        ? undefined
        : `must not carry credentials (user:password@), which error messages would show in logs: ${fix}.`;
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
   * A string compared exactly with what the service sends (an issuer, an audience): not empty or blank, like
   * {@link optionRules.nonEmptyString}, and without surrounding whitespace; `example` shows the trim.
   */
  trimmedString(hint: string, example: string): OptionRule {
    const nonEmpty = optionRules.nonEmptyString(hint);
    return rule(
      (value, path, report) => nonEmpty(value, path, report) ?? strayWhitespaceProblem(value as string, example),
    );
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
