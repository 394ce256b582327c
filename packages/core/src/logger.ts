/** One structured log entry. It never holds a secret, a token or body content. */
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
  /** A thrown error (handler or store failure). */
  error?: unknown;
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

export function safeLog(logger: Logger | undefined, entry: LogEntry): void {
  if (!logger) return;
  try {
    logger(entry);
  } catch {
    // A broken logger must not turn a processed delivery into a failure.
  }
}
