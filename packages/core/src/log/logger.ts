/**
 * An error as a log entry carries it: plain data, so that JSON loggers (pino, console.log of JSON) show it instead
 * of `{}`. Message and stack are truncated and stripped of control characters.
 */
export interface SerializedError {
  name: string;
  message: string;
  /** The error's `code` when it has a string one (e.g. `'ECONNREFUSED'`, `'ERR_JWKS_TIMEOUT'`). */
  code?: string;
  stack?: string;
  /** The `cause` chain, a few levels deep. */
  cause?: SerializedError;
  /** The errors an aggregate carries (a `HandlerError` with several failed handlers, an `AggregateError`). */
  errors?: SerializedError[];
}

/**
 * One structured log entry. It never holds a secret, a token or body content. Values that come from the request
 * (event id and type, claim names, header parameters in `detail`) are cut to a few hundred characters and their
 * control characters escaped, so a sender can neither flood a log line nor forge one.
 */
export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  /** What happened, in words. */
  message: string;
  /** The rejection or outcome code, when there is one. */
  code?: string;
  /** HTTP status the delivery got. */
  status?: number;
  eventId?: string;
  eventType?: string;
  /** Why, for operators: which check failed (claim names, key versions), never values of the body. */
  detail?: string;
  /** A thrown error (handler, store or JWKS failure), serialised. */
  error?: SerializedError;
}

/**
 * The logger hook: called once per noteworthy outcome. Route it to your logger.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, logger: (entry) => pinoLogger[entry.level](entry, entry.message) })
 * ```
 */
export type Logger = (entry: LogEntry) => void;

/** What the receiver hands to {@link safeLog}: an entry whose error is still the thrown value. */
export type LogInput = Omit<LogEntry, 'error'> & { error?: unknown };

/** Longest text kept from a value a sender controls. */
const MAX_TEXT = 300;
const MAX_MESSAGE = 1_000;
const MAX_STACK = 4_000;
const MAX_DEPTH = 4;
const MAX_AGGREGATED = 5;
// C0 and C1 controls, DEL, line and paragraph separators, and the bidirectional overrides and isolates that can make
// a log line read differently from what it holds.
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// The same without newline and tab, for stacks, which are multi-line by nature and never come from the sender.
const CONTROL_BUT_LINES =
  // eslint-disable-next-line no-control-regex -- as above
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escapeControl(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Cuts `text` to `max` characters (saying how many were dropped) and escapes control characters as `\uXXXX`.
 *
 * @example
 * ```ts
 * sanitizeLogText('kyb.x\n[fake] admin logged in', 300) // 'kyb.x\\u000a[fake] admin logged in'
 * ```
 */
export function sanitizeLogText(text: string, max = MAX_TEXT, control: RegExp = CONTROL): string {
  let kept = text.length > max ? text.slice(0, max) : text;
  // Never end on half a surrogate pair.
  if (kept.length < text.length && /[\ud800-\udbff]$/.test(kept)) kept = kept.slice(0, -1);
  const escaped = kept.replace(control, escapeControl);
  return kept.length < text.length ? `${escaped}…[${text.length - kept.length} more characters]` : escaped;
}

/**
 * Turns a thrown value into plain data for a log entry: name, message, code, stack, and the cause chain and
 * aggregated errors a few levels deep.
 *
 * @example
 * ```ts
 * JSON.stringify(serializeError(new Error('boom', { cause: new TypeError('fetch failed') })))
 * // {"name":"Error","message":"boom","stack":"…","cause":{"name":"TypeError","message":"fetch failed",…}}
 * ```
 */
export function serializeError(error: unknown, depth = 0): SerializedError {
  if (!(error instanceof Error)) {
    // A thrown string or object: its type only, since its text could be anything (a body, a token).
    return { name: typeof error, message: `a non-Error value was thrown (${error === null ? 'null' : typeof error})` };
  }
  const serialized: SerializedError = {
    name: sanitizeLogText(String(error.name), MAX_TEXT),
    message: sanitizeLogText(String(error.message), MAX_MESSAGE),
  };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') serialized.code = sanitizeLogText(code, MAX_TEXT);
  if (typeof error.stack === 'string') serialized.stack = sanitizeLogText(error.stack, MAX_STACK, CONTROL_BUT_LINES);
  if (depth < MAX_DEPTH) {
    const errors = (error as { errors?: unknown }).errors;
    const aggregated = Array.isArray(errors) && errors.length > 0 ? errors.slice(0, MAX_AGGREGATED) : undefined;
    // A HandlerError's cause is its first failure, already in `errors`: one stack per failure, not two.
    if (error.cause !== undefined && !aggregated?.includes(error.cause)) {
      serialized.cause = serializeError(error.cause, depth + 1);
    }
    if (aggregated) serialized.errors = aggregated.map((item) => serializeError(item, depth + 1));
  }
  return serialized;
}

const SEVERITY: Readonly<Record<LogEntry['level'], number>> = { debug: 0, info: 1, warn: 2, error: 3 };
// Loggers made by createConsoleLogger, with the severity below which they print nothing: safeLog builds no entry for
// them then. Every delivery logs a debug entry, and sanitising its texts was the larger part of the logging cost.
const thresholds = new WeakMap<Logger, number>();

/**
 * Records that `logger` prints nothing below `level`, so that {@link safeLog} skips building those entries. For
 * loggers of this package only; a user's logger gets every entry and filters as it likes.
 *
 * @example
 * ```ts
 * return dropsEntriesBelow((entry) => console.warn(entry.message), 'warn')
 * ```
 */
export function dropsEntriesBelow(logger: Logger, level: LogEntry['level']): Logger {
  thresholds.set(logger, SEVERITY[level]);
  return logger;
}

/**
 * The severity order of log levels, lowest first: debug 0, info 1, warn 2, error 3.
 *
 * @example
 * ```ts
 * if (severityOf(entry.level) >= severityOf('warn')) alert(entry)
 * ```
 */
export function severityOf(level: LogEntry['level']): number | undefined {
  return Object.hasOwn(SEVERITY, level) ? SEVERITY[level] : undefined;
}

/**
 * Whether `logger` is there and takes entries of `level` (see {@link dropsEntriesBelow}): a caller that logs on every
 * delivery asks first, and builds no entry for a logger that would drop it.
 *
 * @example
 * ```ts
 * if (takesLevel(logger, 'debug')) logTaken(logger, { level: 'debug', message: 'delivery processed' })
 * ```
 */
export function takesLevel(logger: Logger | undefined, level: LogEntry['level']): logger is Logger {
  if (!logger) return false;
  const threshold = thresholds.get(logger);
  return threshold === undefined || SEVERITY[level] >= threshold;
}

/**
 * Calls the logger with a sanitised entry; a logger that throws changes nothing, and one that would drop the entry
 * (see {@link dropsEntriesBelow}) is not called.
 *
 * @example
 * ```ts
 * safeLog(logger, { level: 'warn', message: 'delivery rejected: signature_mismatch', eventType: envelope.event })
 * ```
 */
export function safeLog(logger: Logger | undefined, input: LogInput): void {
  if (takesLevel(logger, input.level)) logTaken(logger, input);
}

/**
 * {@link safeLog} for a caller that has already asked {@link takesLevel}: the per-delivery entries ask first so as to
 * build no input for a logger that drops it, and need not look the logger's threshold up twice.
 *
 * @example
 * ```ts
 * if (takesLevel(logger, 'debug')) logTaken(logger, { level: 'debug', message: 'delivery processed' })
 * ```
 */
export function logTaken(logger: Logger, input: LogInput): void {
  try {
    const entry: LogEntry = { level: input.level, message: sanitizeLogText(input.message, MAX_MESSAGE) };
    if (input.code !== undefined) entry.code = sanitizeLogText(input.code);
    if (input.status !== undefined) entry.status = input.status;
    if (input.eventId !== undefined) entry.eventId = sanitizeLogText(input.eventId);
    if (input.eventType !== undefined) entry.eventType = sanitizeLogText(input.eventType);
    if (input.detail !== undefined) entry.detail = sanitizeLogText(input.detail);
    if (input.error !== undefined) entry.error = serializeError(input.error);
    logger(entry);
  } catch {
    // A broken logger must not turn a processed delivery into a failure.
  }
}
