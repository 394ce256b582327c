import { readWebBodyStream, type Observers } from '@kyb-webhooks/core/adapter';
import type { ClientRequestTrace } from '@kyb-webhooks/core';
import { InsufficientCreditError, KybApiError, readCreditAmounts } from './errors.js';
import { readErrorCode } from './parse.js';

/**
 * How failed calls are retried: jittered exponential backoff (a wait drawn between half and all of
 * `min(baseDelayMs * 2^(n-1), maxDelayMs)`), or exactly the service's Retry-After when it sends one. Only network
 * errors, timeouts, 408, 429 and 5xx other than 501 and 505 are retried, and only for GET unless a call opts in.
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
  /** The largest 2xx body read; a larger one ends the call with `response_too_large`. */
  maxResponseBytes: number;
  /** Who watches each attempt (the client's `telemetry` option, the `kyb-webhooks:client:request` channel). */
  requests: Observers<'request'>;
}

/** A response the caller handles itself: a 2xx, or a status listed in `accept`. */
export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
  headers: Headers;
  /** The URL answered (a next page may be one the API named). */
  url: URL;
  /** Attempts the call took, retries included. */
  attempts: number;
}

/**
 * How much of a non-2xx body is read, for its error code only: an error body is never large, and one that is (a
 * proxy's page, a misbehaving service) is not worth the memory. Past it the body is dropped, not an error.
 */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

// 501 and 505 say the service does not support the call at all; asking again cannot change that.
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

class AttemptFailure {
  constructor(
    readonly code: 'timeout' | 'network_error',
    readonly cause: unknown,
  ) {}
}

/** A 2xx whose body passed maxResponseBytes: not retried, the next answer would be as large. */
class TooLarge {
  constructor(readonly status: number) {}
}

/** The options of one {@link send}: a call's own, plus how its answer is taken. */
export interface SendOptions extends CallOptions {
  /** Non-2xx statuses the caller handles itself. */
  accept?: readonly number[];
  /** The code of a 404 whose body names none. */
  notFoundCode?: string;
  /** A JSON body, sent with `content-type: application/json`. */
  body?: unknown;
  /** The path template, ids as `{id}`, for telemetry; default: the path with its id-like segments replaced. */
  route?: string;
}

/**
 * Sends one API call with auth, per-attempt timeout, retries and error mapping. `target` is a path under the
 * base URL, or a URL of the API's own (a next page the API named, checked to be on its origin by the caller).
 */
export async function send(
  transport: TransportOptions,
  method: string,
  target: string | URL,
  call: SendOptions = {},
): Promise<RawResponse> {
  const url = typeof target === 'string' ? new URL(transport.baseUrl + target) : target;
  const operation = `${method} ${url.pathname}`;
  const idempotent = method === 'GET' || method === 'HEAD' || call.retry === true;
  const maxAttempts = 1 + (idempotent ? transport.retry.maxRetries : 0);
  const timeoutMs = call.timeoutMs ?? transport.timeoutMs;
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);

  for (let attempt = 1; ; attempt++) {
    throwIfAborted(call.signal, operation, attempt - 1);
    let outcome: RawResponse | AttemptFailure | TooLarge;
    let retryAfterMs: number | undefined;
    try {
      const headers: Record<string, string> = { authorization: transport.apiKey, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const attemptOnce = () =>
        withTimeout(timeoutMs, call.signal, async (signal) => {
          const response = await transport.fetch(url, {
            method,
            headers,
            signal,
            redirect: 'manual',
            ...(body === undefined ? {} : { body }),
          });
          retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
          const ok = response.status >= 200 && response.status < 300;
          const text = await readText(response, ok ? transport.maxResponseBytes : MAX_ERROR_BODY_BYTES);
          if (text === undefined && ok) return new TooLarge(response.status);
          return {
            status: response.status,
            contentType: response.headers.get('content-type') ?? '',
            text: text ?? '',
            headers: response.headers,
            url,
            attempts: attempt,
          };
        });
      outcome = await (transport.requests.active
        ? watchedAttempt(transport.requests, requestTrace(method, url, call.route, attempt), attemptOnce)
        : attemptOnce());
    } catch (error) {
      throwIfAborted(call.signal, operation, attempt);
      outcome = new AttemptFailure(isTimeout(error) ? 'timeout' : 'network_error', error);
    }

    if (outcome instanceof TooLarge) {
      throw new KybApiError({
        status: outcome.status,
        code: 'response_too_large',
        message:
          `${operation}: the response body is over maxResponseBytes (${transport.maxResponseBytes} bytes). ` +
          "Raise the client's maxResponseBytes option, or ask for smaller pages with pageSize.",
        operation,
        attempts: attempt,
      });
    }
    if (!(outcome instanceof AttemptFailure)) {
      if ((outcome.status >= 200 && outcome.status < 300) || call.accept?.includes(outcome.status)) return outcome;
    }
    const retryable = outcome instanceof AttemptFailure || isRetryableStatus(outcome.status);
    const tooLong = retryAfterMs !== undefined && retryAfterMs > transport.retry.maxRetryAfterMs;
    if (!retryable || attempt >= maxAttempts || tooLong)
      throw toError(outcome, operation, attempt, retryAfterMs, call.notFoundCode);

    const backoff = Math.min(transport.retry.baseDelayMs * 2 ** (attempt - 1), transport.retry.maxDelayMs);
    const wait = retryAfterMs ?? backoff / 2 + (transport.random() * backoff) / 2;
    await sleep(wait, call.signal, operation, attempt);
  }
}

/** One attempt as the `request` operation: its status once answered; a body over the limit is its error. */
function watchedAttempt(
  requests: Observers<'request'>,
  trace: ClientRequestTrace,
  attemptOnce: () => Promise<RawResponse | TooLarge>,
): Promise<RawResponse | TooLarge> {
  return requests.run(trace, attemptOnce, (done, outcome) => {
    done.status = outcome.status;
    if (outcome instanceof TooLarge) done.error = { code: 'response_too_large' };
  });
}

function requestTrace(method: string, url: URL, route: string | undefined, attempt: number): ClientRequestTrace {
  return { method, route: route ?? routeOf(url.pathname), url: shownUrl(url), origin: url.origin, attempt };
}

/**
 * The URL as a trace shows it: each query value `REDACTED`, as the HTTP conventions redact a sensitive one (a page
 * cursor the API named, a filter the caller passed: none is needed to read a trace). The base URL has no credentials.
 */
export function shownUrl(url: URL): string {
  if (url.search === '') return url.href;
  const names = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`);
  return `${url.origin}${url.pathname}?${names.join('&')}`;
}

/**
 * A path as a template, for a call the client does not name itself (`client.request`): each segment that may be an
 * id is `{id}`, so no id reaches a metric attribute. An id is a segment with a digit in it (not a version such as
 * v1), a prefixed one (`dr_KqZpWx…`), or any segment after a collection of the API (`data-requests/…`), whatever
 * its letters.
 */
export function routeOf(pathname: string): string {
  const segments = pathname.split('/');
  return segments
    .map((segment, index) => (looksLikeId(segment) || ID_AFTER.has(segments[index - 1] ?? '') ? '{id}' : segment))
    .join('/');
}

function looksLikeId(segment: string): boolean {
  return (/\d/.test(segment) && !/^v\d+$/.test(segment)) || /^[a-z]{1,12}_[A-Za-z0-9_-]+$/.test(segment);
}

// The API's collections whose next segment is always an id (spec 4: `/api/v1/kyb/data-requests/{request_id}/…`).
const ID_AFTER = new Set(['data-requests', 'signature-requests', 'requests', 'events', 'deliveries']);

/**
 * The text of a body, reading at most `maxBytes` of it; undefined past that. Decoded like `Response.text()`.
 */
async function readText(response: Response, maxBytes: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const read = await readWebBodyStream(response.body, {
    maxBytes,
    declaredLength: response.headers.get('content-length') ?? undefined,
    drain: false,
  });
  if (!read.ok) {
    void response.body.cancel().catch(() => {});
    return undefined;
  }
  return new TextDecoder().decode(read.body);
}

function toError(
  outcome: RawResponse | AttemptFailure,
  operation: string,
  attempts: number,
  retryAfterMs: number | undefined,
  notFoundCode: string | undefined,
): KybApiError {
  const base = { operation, attempts, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (outcome instanceof AttemptFailure) {
    if (outcome.code === 'timeout') {
      return new KybApiError({
        ...base,
        status: null,
        code: 'timeout',
        message: `${operation} timed out after ${attempts} attempt(s).`,
        cause: outcome.cause,
      });
    }
    // The platform's error is not kept: its message can quote a header value (the API key) or the URL. Its code
    // (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED …) is what tells the cause apart.
    const reason = networkErrorCode(outcome.cause);
    return new KybApiError({
      ...base,
      status: null,
      code: 'network_error',
      message: `${operation} failed before the service answered (network error${reason ? `: ${reason}` : ''}) after ${attempts} attempt(s).`,
    });
  }
  const code =
    readErrorCode(outcome.text) ??
    (outcome.status === 404 && notFoundCode ? notFoundCode : defaultCode(outcome.status));
  if (outcome.status === 402 && code === 'insufficient_credit') {
    const amounts = readCreditAmounts(outcome.text);
    const missing =
      amounts.shortfallCents === undefined
        ? ''
        : ` (${amounts.shortfallCents} cents short${amounts.currency ? `, ${amounts.currency}` : ''})`;
    return new InsufficientCreditError({
      ...base,
      amounts,
      message: `${operation}: 402 insufficient_credit${missing}. The request cannot be afforded; top up the credit and create it again.`,
    });
  }
  return new KybApiError({
    ...base,
    status: outcome.status,
    code,
    message: `${operation}: the KYB API answered ${outcome.status} (${code})${hint(outcome.status)}`,
  });
}

/** The first system-style code (`ECONNREFUSED`, `UND_ERR_SOCKET` …) along an error's cause chain. */
function networkErrorCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function defaultCode(status: number): string {
  // Spec 7 names one 402, insufficient_credit: a 402 whose body gives no code (a bare "Payment Required") is it.
  if (status === 402) return 'insufficient_credit';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
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
  // An HTTP date starts with its weekday (RFC 9110 5.6.7: "Sun, 06 Nov 1994 08:49:37 GMT", and the obsolete
  // "Sunday, 06-Nov-94 08:49:37 GMT" and "Sun Nov  6 08:49:37 1994" a recipient must accept too); without letters
  // Date.parse reads "-1" as a year.
  if (!/^[A-Za-z]{3,9},? /.test(trimmed)) return undefined;
  // asctime names no zone, and means GMT: Date.parse would take it as local time.
  const date = Date.parse(
    /^[A-Za-z]{3} [A-Za-z]{3} +\d{1,2} [\d:]{8} \d{4}$/.test(trimmed) ? `${trimmed} GMT` : trimmed,
  );
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function withTimeout<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  // A controller of our own rather than AbortSignal.any/timeout, whose support differs across the Web runtimes.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The KYB API call timed out.', 'TimeoutError')),
    timeoutMs,
  );
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
    throw new KybApiError({
      status: null,
      code: 'aborted',
      message: `${operation} was aborted by the caller.`,
      operation,
      attempts,
      cause: signal.reason,
    });
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
