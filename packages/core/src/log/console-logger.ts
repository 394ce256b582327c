import { dropsEntriesBelow, severityOf, type LogEntry, type Logger, type SerializedError } from './logger.js';

/** The console methods the logger writes with; `globalThis.console` by default. */
export type LogConsole = Pick<Console, 'debug' | 'info' | 'warn' | 'error'>;

/**
 * Options of {@link createConsoleLogger}.
 *
 * @example
 * ```ts
 * createConsoleLogger({ level: 'info' }) // also the backfill and late-outcome notes
 * ```
 */
export interface ConsoleLoggerOptions {
  /** Least severe level printed. Default `'warn'`: every rejection and failure, nothing on success. */
  level?: LogEntry['level'];
  /** Where lines go; default `globalThis.console` (`warn` and `error` write to stderr on Node). */
  console?: LogConsole;
}

const PREFIX = 'kyb-webhooks';

/**
 * The receiver's default logger: one readable line per rejection and failure, and for a thrown error (a handler's,
 * the store's) its stack and causes on the lines below. Entries are already sanitised by the receiver: no secret,
 * token or body text, sender-controlled values cut short with control characters escaped. Replace it with your own
 * `logger` (pino, a metrics hook) or silence it with `logger: false`.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, attestation, logger: createConsoleLogger({ level: 'info' }) })
 * // kyb-webhooks warn 401 signature_mismatch: delivery rejected: signature_mismatch — kv=1
 * ```
 */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const level = options.level ?? 'warn';
  const threshold = severityOf(level);
  if (threshold === undefined) throw new TypeError(`createConsoleLogger: level must be debug, info, warn or error.`);
  return dropsEntriesBelow((entry) => {
    // Still checked here: the function can be called directly, not only through the receiver's safeLog.
    if (severityOf(entry.level)! < threshold) return;
    const out = options.console ?? globalThis.console;
    out[entry.level](formatLogEntry(entry));
  }, level);
}

/**
 * One entry as text: a first line with level, status, code, message, event id and type, and detail; then the error's
 * stack (or name and message) and its cause chain, indented.
 *
 * @example
 * ```ts
 * formatLogEntry({ level: 'error', message: 'a handler failed', code: 'handler_failed', status: 500, error })
 * // 'kyb-webhooks error 500 handler_failed: a handler failed\n  Error: db down\n      at …'
 * ```
 */
export function formatLogEntry(entry: LogEntry): string {
  let line = `${PREFIX} ${entry.level}`;
  if (entry.status !== undefined) line += ` ${entry.status}`;
  if (entry.code !== undefined) line += ` ${entry.code}`;
  line += `: ${entry.message}`;
  const about = [entry.eventId && `event ${entry.eventId}`, entry.eventType].filter(Boolean).join(', ');
  if (about) line += ` (${about})`;
  if (entry.detail !== undefined) line += ` — ${entry.detail}`;
  if (entry.error) line += `\n${indent(describeError(entry.error))}`;
  return line;
}

function describeError(error: SerializedError): string {
  // A stack already starts with "Name: message".
  let text = error.stack ?? `${error.name}: ${error.message}`;
  if (error.code !== undefined && !text.includes(error.code)) text += ` [${error.code}]`;
  for (const inner of error.errors ?? []) text += `\n${indent(describeError(inner))}`;
  if (error.cause) text += `\ncaused by ${describeError(error.cause)}`;
  return text;
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}
