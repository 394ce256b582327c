import { InsufficientCreditError, KybApiError } from './errors.js';
import { readErrorCode } from './parse.js';

/**
 * How failed calls are retried: jittered exponential backoff (a wait drawn between half and all of
 * `min(baseDelayMs * 2^(n-1), maxDelayMs)`), or exactly the service's Retry-After when it sends one. Only network
 * errors, timeouts, 408, 429 and 5xx are retried, and only for GET unless a call opts in.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, retry: { maxRetries: 5, maxRetryAfterMs: 60_000 } })
 * ```
 */
export interface RetryPolicy {
  /** Retries after the first attempt; default 3. 0 turns retries off. */
  maxRetries?: number;
  /** Default 250 ms. */
  baseDelayMs?: number;
  /** Default 5000 ms. */
  maxDelayMs?: number;
  /**
   * The longest Retry-After the client waits out; default 30 s. A longer one ends the call at once with a
   * {@link KybApiError} whose `retryAfterMs` says when to come back, instead of blocking the caller for that long.
   */
  maxRetryAfterMs?: number;
}

/**
 * Per-call options, accepted by every client method.
 *
 * @example
 * ```ts
 * const controller = new AbortController()
 * await client.redeliver(requestId, { signal: controller.signal, timeoutMs: 5_000, retry: true })
 * ```
 */
export interface CallOptions {
  /** Aborts the call, including a pending retry wait; the call then rejects with code `aborted`. */
  signal?: AbortSignal;
  /** Timeout of each attempt (headers and body); overrides the client's `timeoutMs`. */
  timeoutMs?: number;
  /**
   * Retry this call even though it is not a GET. Safe for reactivate; for redeliver a retry after a lost answer can
   * queue the events twice (harmless for a receiver that dedupes on event_id, which every receiver must).
   */
  retry?: boolean;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  retry: Required<RetryPolicy>;
  fetch: typeof fetch;
  random: () => number;
  userAgent?: string;
}

/** A response the caller handles itself: a 2xx, or a status listed in `accept`. */
export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
}

const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

class AttemptFailure {
  constructor(
    readonly code: 'timeout' | 'network_error',
    readonly cause: unknown,
  ) {}
}

/** Sends one API call with auth, per-attempt timeout, retries and error mapping. */
export async function send(
  transport: TransportOptions,
  method: 'GET' | 'POST',
  path: string,
  call: CallOptions & { accept?: readonly number[] } = {},
): Promise<RawResponse> {
  const operation = `${method} ${path.split('?')[0]}`;
  const idempotent = method === 'GET' || call.retry === true;
  const maxAttempts = 1 + (idempotent ? transport.retry.maxRetries : 0);
  const timeoutMs = call.timeoutMs ?? transport.timeoutMs;
  const url = transport.baseUrl + path;

  for (let attempt = 1; ; attempt++) {
    throwIfAborted(call.signal, operation, attempt - 1);
    let outcome: RawResponse | AttemptFailure;
    let retryAfterMs: number | undefined;
    try {
      const headers: Record<string, string> = { authorization: transport.apiKey, accept: 'application/json' };
      if (transport.userAgent) headers['user-agent'] = transport.userAgent;
      outcome = await withTimeout(timeoutMs, call.signal, async (signal) => {
        const response = await transport.fetch(url, { method, headers, signal, redirect: 'manual' });
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
        const text = await response.text();
        return { status: response.status, contentType: response.headers.get('content-type') ?? '', text };
      });
    } catch (error) {
      throwIfAborted(call.signal, operation, attempt);
      outcome = new AttemptFailure(isTimeout(error) ? 'timeout' : 'network_error', error);
    }

    if (!(outcome instanceof AttemptFailure)) {
      if ((outcome.status >= 200 && outcome.status < 300) || call.accept?.includes(outcome.status)) return outcome;
    }
    const retryable = outcome instanceof AttemptFailure || RETRYABLE_STATUSES.has(outcome.status);
    const tooLong = retryAfterMs !== undefined && retryAfterMs > transport.retry.maxRetryAfterMs;
    if (!retryable || attempt >= maxAttempts || tooLong) throw toError(outcome, operation, attempt, retryAfterMs);

    const backoff = Math.min(transport.retry.baseDelayMs * 2 ** (attempt - 1), transport.retry.maxDelayMs);
    const wait = retryAfterMs ?? backoff / 2 + (transport.random() * backoff) / 2;
    await sleep(wait, call.signal, operation, attempt);
  }
}

function toError(outcome: RawResponse | AttemptFailure, operation: string, attempts: number, retryAfterMs?: number): KybApiError {
  const base = { operation, attempts, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (outcome instanceof AttemptFailure) {
    const what = outcome.code === 'timeout' ? 'timed out' : 'failed before the service answered (network error)';
    return new KybApiError({ ...base, status: null, code: outcome.code, message: `${operation} ${what} after ${attempts} attempt(s).`, cause: outcome.cause });
  }
  const code = readErrorCode(outcome.text) ?? defaultCode(outcome.status);
  if (outcome.status === 402 && code === 'insufficient_credit') {
    return new InsufficientCreditError({ ...base, message: `${operation}: 402 insufficient_credit. The request cannot be afforded; top up the credit and create it again.` });
  }
  return new KybApiError({ ...base, status: outcome.status, code, message: `${operation}: the KYB API answered ${outcome.status} (${code})${hint(outcome.status)}` });
}

function defaultCode(status: number): string {
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'service_unavailable';
  return 'http_error';
}

function hint(status: number): string {
  if (status === 401 || status === 403) return '. Check the apiKey option: it is sent as the raw Authorization header.';
  if (status >= 300 && status < 400) return '. Redirects are not followed: check the baseUrl option.';
  return '.';
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its weekday and month; without letters Date.parse reads "-1" as a year.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function withTimeout<T>(timeoutMs: number, outer: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  // A controller of our own rather than AbortSignal.any/timeout, whose support differs across the Web runtimes.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The KYB API call timed out.', 'TimeoutError')), timeoutMs);
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(controller.signal);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function isTimeout(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'TimeoutError';
}

function throwIfAborted(signal: AbortSignal | undefined, operation: string, attempts: number): void {
  if (signal?.aborted) {
    throw new KybApiError({ status: null, code: 'aborted', message: `${operation} was aborted by the caller.`, operation, attempts, cause: signal.reason });
  }
}

function sleep(ms: number, signal: AbortSignal | undefined, operation: string, attempts: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      try {
        throwIfAborted(signal, operation, attempts);
      } catch (error) {
        reject(error);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
