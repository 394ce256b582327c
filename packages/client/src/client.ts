import {
  answersFromClaims,
  createAttestationVerifier,
  describeValue,
  KybWebhookError,
  optionRules,
  validateOptions,
  type AttestationClaims,
  type AttestationOptions,
  type OptionRule,
  type ReleasedAnswers,
} from '@kyb-webhooks/core';
import { KybApiError } from './errors.js';
import { send, type CallOptions, type RetryPolicy, type TransportOptions } from './http.js';
import {
  InvalidBody,
  decodeClaims,
  parseJson,
  readErrorCode,
  readDeliveries,
  readEventsPage,
  readReleaseToken,
  type DeliveryLogEntry,
  type StreamEvent,
} from './parse.js';

/**
 * The path prefix of the per-request operations (deliveries, events, redeliver), which the spec does not show
 * (4.2 "…"). This default mirrors the release path; change it with {@link KybClientOptions.requestPrefix}.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, requestPrefix: DEFAULT_REQUEST_PREFIX })
 * ```
 */
export const DEFAULT_REQUEST_PREFIX = '/api/v1/kyb/data-requests';

/**
 * Options of {@link createKybClient}.
 *
 * @example
 * ```ts
 * const client = createKybClient({
 *   baseUrl: 'https://api.kyb.example.com',
 *   apiKey: process.env.KYB_API_KEY!,
 *   attestation: { issuer: 'https://kyb.example.com', audience: process.env.KYB_AUDIENCE! },
 *   timeoutMs: 10_000,
 * })
 * ```
 */
export interface KybClientOptions {
  /** The spec's `{base_url}`, e.g. `https://api.kyb.example.com` (a trailing slash is ignored). */
  baseUrl: string | URL;
  /** Sent on every call as the raw `Authorization` header (spec 5.3, no "Bearer"). */
  apiKey: string;
  /**
   * What the release pull's attestation is verified with: the same options the receiver takes. `jwksUrl` defaults
   * to `{baseUrl}/.well-known/kyb-jwks.json`. Needed by {@link KybClient.release} only.
   */
  attestation?: Omit<AttestationOptions, 'jwksUrl'> & { jwksUrl?: string | URL };
  /** Path prefix of deliveries, events and redeliver (not shown by the spec); default {@link DEFAULT_REQUEST_PREFIX}. */
  requestPrefix?: string;
  /** Timeout of one attempt, headers and body; default 10 s. */
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Events asked for per page by {@link KybClient.events}; default: the service's own page size. */
  pageSize?: number;
  /**
   * The largest response body read, in bytes; default 16 MiB. A larger one ends the call with `response_too_large`
   * instead of filling memory (error bodies are read up to 64 KiB, for their code only).
   */
  maxResponseBytes?: number;
  /** Default the global fetch. Also used for the JWKS unless `attestation.fetch` is given. */
  fetch?: typeof fetch;
  /** Clock in Unix milliseconds for attestation checks; default `Date.now`. */
  now?: () => number;
  /** Randomness for backoff jitter, in [0, 1); default `Math.random`. */
  random?: () => number;
}

/**
 * The result of a release pull: a discriminated union for the three normal states (spec 4.2). Anything else is a
 * thrown {@link KybApiError}.
 *
 * @example
 * ```ts
 * const result = await client.release(requestId)
 * if (result.status === 'released') save(result.answers.get(directorAddress, 'director_name')?.value)
 * else if (result.status === 'payload_expired') await createNewRequest()
 * ```
 */
export type ReleaseResult =
  | {
      status: 'released';
      /** The verified attestation claims. */
      claims: AttestationClaims;
      /** The released answers, keyed by subject and name (spec 2.6). */
      answers: ReleasedAnswers;
      /** The attestation JWT itself, for an audit trail. It carries personal data: store it like the answers. */
      token: string;
    }
  | { status: 'not_released' }
  | { status: 'payload_expired' };

/**
 * Options of {@link KybClient.events}.
 *
 * @example
 * ```ts
 * client.events(requestId, { afterSeq: 41, pageSize: 500 })
 * ```
 */
export interface EventsOptions extends CallOptions {
  /** Return the events after this seq; default -1 (the whole stream, whether it starts at 0 or 1). */
  afterSeq?: number;
  pageSize?: number;
}

/**
 * The KYB API, typed. Every call sends `Authorization: <API_KEY>`, times out per attempt, and retries GETs (and
 * POSTs that opt in) on network errors, timeouts, 408, 429 and 5xx.
 *
 * @example
 * ```ts
 * const client = createKybClient({ baseUrl, apiKey, attestation: { issuer, audience } })
 * await client.reactivate()
 * for await (const event of client.events(requestId, { afterSeq: cursor })) console.log(event.seq)
 * ```
 */
export interface KybClient {
  /** GET /api/v1/kyb/data-requests/{requestId}/release, its attestation verified and bound to `requestId`. */
  release(requestId: string, options?: CallOptions): Promise<ReleaseResult>;
  /** GET {prefix}/{requestId}/deliveries: every delivery attempt and what the merchant host answered. */
  deliveries(requestId: string, options?: CallOptions): Promise<DeliveryLogEntry[]>;
  /** GET {prefix}/{requestId}/events?after_seq=…, paged: yields every event after `afterSeq`, in seq order. */
  events(requestId: string, options?: EventsOptions): AsyncIterableIterator<StreamEvent>;
  /** POST {prefix}/{requestId}/redeliver: queues the stream's events again; resolves with how many (when told). */
  redeliver(requestId: string, options?: CallOptions): Promise<{ queued: number | undefined; [field: string]: unknown }>;
  /** POST /api/v1/kyb/webhook-endpoint/reactivate: clears the quarantine; the backlog is then delivered. */
  reactivate(options?: CallOptions): Promise<{ reactivated: boolean; [field: string]: unknown }>;
}

const RELEASED = 'kyb.data_request.released';

/**
 * Creates a {@link KybClient}. Uses native `fetch` only, so it runs on Node, Bun, Deno and Workers.
 *
 * @example
 * ```ts
 * const client = createKybClient({
 *   baseUrl: 'https://api.kyb.example.com',
 *   apiKey: process.env.KYB_API_KEY!,
 *   attestation: { issuer: 'https://kyb.example.com', audience: process.env.KYB_AUDIENCE! },
 * })
 * const result = await client.release('dr_01j…')
 * ```
 */
export function createKybClient(options: KybClientOptions): KybClient {
  validateOptions(options, CLIENT_OPTIONS);
  const baseUrl = new URL(String(options.baseUrl)).href.replace(/\/+$/, '');
  const prefix = '/' + (options.requestPrefix ?? DEFAULT_REQUEST_PREFIX).replace(/^\/+|\/+$/g, '');
  const fetchImpl = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const now = options.now ?? Date.now;
  const transport: TransportOptions = {
    baseUrl,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs ?? 10_000,
    retry: {
      maxRetries: options.retry?.maxRetries ?? 3,
      baseDelayMs: options.retry?.baseDelayMs ?? 250,
      maxDelayMs: options.retry?.maxDelayMs ?? 5000,
      maxRetryAfterMs: options.retry?.maxRetryAfterMs ?? 30_000,
    },
    fetch: fetchImpl,
    random: options.random ?? Math.random,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
  // Built now, so a mistake in the attestation options is config_invalid at creation, not at the first release().
  const verify = options.attestation
    ? createAttestationVerifier(
        {
          fetch: fetchImpl,
          ...options.attestation,
          // An inline `jwks` stands alone; only without one does the JWKS come from the API.
          ...(options.attestation.jwks === undefined ? { jwksUrl: options.attestation.jwksUrl ?? `${baseUrl}/.well-known/kyb-jwks.json` } : {}),
        },
        now,
      )
    : undefined;

  function requestPath(requestId: string, operation: string): string {
    checkRequestId(requestId, `${operation === 'redeliver' ? 'POST' : 'GET'} ${prefix}/{requestId}/${operation}`);
    return `${prefix}/${encodeURIComponent(requestId)}/${operation}`;
  }

  function invalid(operation: string, cause: InvalidBody, attempts: number): KybApiError {
    return new KybApiError({ status: 200, code: 'invalid_response', message: `${operation}: unexpected response body: ${cause.message}.`, operation, attempts });
  }

  function parsed<T>(operation: string, attempts: number, read: () => T): T {
    try {
      return read();
    } catch (error) {
      // Only the readers' own errors are described; anything else could quote the body.
      throw invalid(operation, error instanceof InvalidBody ? error : new InvalidBody('unreadable'), attempts);
    }
  }

  async function* events(requestId: string, eventsOptions: EventsOptions = {}): AsyncGenerator<StreamEvent> {
    validateOptions(eventsOptions, EVENTS_OPTIONS);
    const path = requestPath(requestId, 'events');
    const operation = `GET ${path}`;
    let after = eventsOptions.afterSeq ?? -1;
    const pageSize = eventsOptions.pageSize ?? options.pageSize;
    for (;;) {
      const query = `?after_seq=${after}${pageSize === undefined ? '' : `&limit=${pageSize}`}`;
      const response = await send(transport, 'GET', path + query, { ...eventsOptions, notFoundCode: 'request_not_found' });
      const page = parsed(operation, response.attempts, () => readEventsPage(response.text));
      for (const event of page.events) {
        // A page that does not move forward would page forever.
        if (event.seq <= after) throw invalid(operation, new InvalidBody(`events out of order (seq ${event.seq} after ${after})`), response.attempts);
        // The stream of this request only: an event of another stream handed to receiver.replay would run as if it
        // were part of this one, and nothing but the HMAC (absent on fetched events) binds an unattested type to it.
        if (event.stream_id !== requestId) throw invalid(operation, new InvalidBody(`an event of another stream (seq ${event.seq})`), response.attempts);
        after = event.seq;
        yield event;
      }
      if (page.events.length === 0) {
        if (page.hasMore === true) throw invalid(operation, new InvalidBody('an empty page that says has_more'), response.attempts);
        return;
      }
      if (page.hasMore === false) return;
    }
  }

  return {
    async release(requestId, call) {
      const path = `/api/v1/kyb/data-requests/${encodeURIComponent(requestId)}/release`;
      const operation = `GET ${path}`;
      checkRequestId(requestId, 'GET /api/v1/kyb/data-requests/{requestId}/release');
      validateOptions(call, CALL_OPTIONS);
      if (!verify) {
        throw new KybWebhookError(
          'config_invalid',
          "createKybClient: release() verifies the release's attestation: pass attestation: { issuer, audience }, the receiver's attestation options.",
        );
      }
      const response = await send(transport, 'GET', path, { ...call, accept: [404, 410] });
      if (response.status === 410) return { status: 'payload_expired' };
      if (response.status === 404) {
        const code = readErrorCode(response.text);
        if (code === undefined || code === 'not_released') return { status: 'not_released' };
        throw new KybApiError({ status: 404, code, message: `${operation}: the KYB API answered 404 (${code}).`, operation, attempts: response.attempts });
      }
      const token = parsed(operation, response.attempts, () => readReleaseToken(response.text, response.contentType));
      const unverified = parsed(operation, response.attempts, () => decodeClaims(token));
      // The verifier binds the token to an envelope; a pulled release has none, so build the one it must match:
      // this request, the released type, and the ids the token claims (which the signature then vouches for).
      const envelope = {
        event: RELEASED,
        event_id: typeof unverified.event_id === 'string' ? unverified.event_id : '',
        stream_id: requestId,
        seq: typeof unverified.seq === 'number' ? unverified.seq : -1,
        data: { request_id: requestId },
      };
      let claims: AttestationClaims;
      try {
        // Pulled by this client over the API-key-authenticated API: verified as the service's genuine release even
        // past its exp, which the spec's "same attestation the webhook would carry" implies (VerifyAttestationOptions).
        claims = await verify(token, envelope, { fetched: true });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const reason = typeof code === 'string' ? code : 'attestation_invalid';
        throw new KybApiError({
          status: 200,
          code: reason === 'jwks_unavailable' ? 'jwks_unavailable' : 'attestation_rejected',
          message: `${operation}: the release's attestation was rejected (${reason}); it is not a genuine release of this request.`,
          operation,
          attempts: response.attempts,
          cause: error,
        });
      }
      return { status: 'released', claims, answers: answersFromClaims(claims), token };
    },

    async deliveries(requestId, call) {
      const path = requestPath(requestId, 'deliveries');
      validateOptions(call, CALL_OPTIONS);
      const response = await send(transport, 'GET', path, { ...call, notFoundCode: 'request_not_found' });
      return parsed(`GET ${path}`, response.attempts, () => readDeliveries(response.text));
    },

    events,

    async redeliver(requestId, call) {
      const path = requestPath(requestId, 'redeliver');
      validateOptions(call, CALL_OPTIONS);
      const response = await send(transport, 'POST', path, { ...call, notFoundCode: 'request_not_found' });
      const body = parsed(`POST ${path}`, response.attempts, () => objectBody(response.text));
      return { ...body, queued: typeof body.queued === 'number' ? body.queued : undefined };
    },

    async reactivate(call) {
      const path = '/api/v1/kyb/webhook-endpoint/reactivate';
      validateOptions(call, CALL_OPTIONS);
      const response = await send(transport, 'POST', path, call);
      const body = parsed(`POST ${path}`, response.attempts, () => objectBody(response.text));
      // A 2xx is the confirmation; a body that says otherwise explicitly wins.
      return { ...body, reactivated: body.reactivated !== false };
    },
  };
}

/**
 * A request id as a path segment: any non-empty string, percent-encoded, except `.` and `..`, which a URL resolves
 * as "this folder" and "the parent", sending the call (and the API key) to another endpoint.
 */
function checkRequestId(requestId: unknown, operation: string): asserts requestId is string {
  if (typeof requestId === 'string' && requestId !== '' && requestId !== '.' && requestId !== '..') return;
  const what = typeof requestId === 'string' ? (requestId === '' ? 'an empty string' : `"${requestId}"`) : describeValue(requestId);
  throw new KybApiError({
    status: null,
    code: 'invalid_request_id',
    message: `${operation}: requestId must be the request's id (its stream_id, e.g. 'dr_01jd8x2k7q'), got ${what}.`,
    operation,
    attempts: 0,
  });
}

/** The default of {@link KybClientOptions.maxResponseBytes}: 16 MiB, far above any page of events a service sends. */
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const serviceUrl = optionRules.secureUrl(
  "use the KYB API's {base_url}, e.g. 'https://api.kyb.example.com' (http: only on 127.0.0.1, localhost or [::1])",
  'which would send the API key in clear text',
);

// The API's address, to which every path is appended: a secure URL without credentials, query or fragment.
const baseUrlRule: OptionRule = (value, path, report) => {
  const problem = serviceUrl(value, path, report);
  if (problem !== undefined) return problem;
  // The URL is never repeated in these messages: it may carry credentials.
  const url = new URL(String(value));
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@): the API key is the only credential, in `apiKey`.';
  if (url.search !== '' || url.hash !== '') return "must not have a query or fragment (paths are appended to it): use the KYB API's {base_url}.";
  return undefined;
};

const apiKeyRule: OptionRule = (value) => {
  const fix = 'the API key from the KYB dashboard';
  if (typeof value !== 'string') return `must be ${fix} (a string); got ${describeValue(value)} (an unset environment variable?).`;
  if (value === '') return `is empty: set it to ${fix} (an unset environment variable?).`;
  if (value !== value.trim()) return `has leading or trailing whitespace (a line break from a file?): trim it. It is sent as the Authorization header as is.`;
  // Header values are visible ASCII; anything else makes fetch throw with the value in its message.
  if (!/^[\x20-\x7e]+$/.test(value)) return `contains characters a header cannot carry (a line break, a control or non-ASCII character): use ${fix}, as printed there.`;
  return undefined;
};

const delayMs = optionRules.delayMs();

const CLIENT_OPTIONS = {
  owner: 'createKybClient',
  example: "createKybClient({ baseUrl: 'https://api.kyb.example.com', apiKey: process.env.KYB_API_KEY })",
  options: {
    baseUrl: optionRules.required(baseUrlRule, "set it to the KYB API's {base_url}, e.g. 'https://api.kyb.example.com'."),
    apiKey: optionRules.required(apiKeyRule, 'set it to the API key from the KYB dashboard (an unset environment variable?).'),
    attestation: optionRules.object("the receiver's attestation options, { issuer, audience }"),
    requestPrefix: optionRules.urlPath(),
    timeoutMs: optionRules.timerMs(),
    retry: optionRules.fields({
      options: {
        maxRetries: optionRules.wholeNumber(0),
        baseDelayMs: delayMs,
        maxDelayMs: delayMs,
        maxRetryAfterMs: delayMs,
      },
      aliases: { retries: 'maxRetries', maxAttempts: 'maxRetries' },
    }),
    pageSize: optionRules.positiveInteger('events'),
    maxResponseBytes: optionRules.positiveInteger('bytes'),
    fetch: optionRules.func('a fetch implementation'),
    now: optionRules.func('a clock in Unix milliseconds'),
    random: optionRules.func('returns a number in [0, 1)'),
  },
  aliases: { baseURL: 'baseUrl', url: 'baseUrl', apiUrl: 'baseUrl', key: 'apiKey', token: 'apiKey', timeout: 'timeoutMs', maxRetries: 'retry.maxRetries' },
} as const;

const callOptionRules = {
  signal: optionRules.object('an AbortSignal'),
  timeoutMs: optionRules.timerMs(),
  retry: optionRules.boolean(),
};

const CALL_OPTIONS = {
  owner: 'KybClient call options',
  example: '{ signal, timeoutMs: 5_000 }',
  optional: true,
  options: callOptionRules,
  aliases: { timeout: 'timeoutMs' },
} as const;

const EVENTS_OPTIONS = {
  owner: 'KybClient.events options',
  example: '{ afterSeq: 41, signal }',
  optional: true,
  options: { ...callOptionRules, afterSeq: optionRules.wholeNumber(-1, 'seq'), pageSize: optionRules.positiveInteger('events') },
  aliases: { after: 'afterSeq', after_seq: 'afterSeq', timeout: 'timeoutMs', limit: 'pageSize' },
} as const;

function objectBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const body = parseJson(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidBody('expected a JSON object');
  return body as Record<string, unknown>;
}
