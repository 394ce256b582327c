import {
  createAttestationVerifier,
  KybWebhookError,
  type AttestationClaims,
  type AttestationOptions,
  type ReceiverTelemetry,
  type ReleasedAnswers,
} from '@kyb-webhooks/core';
import { describeValue, observersOf, optionRules, validateOptions, type OptionRule } from '@kyb-webhooks/core/adapter';
import { answersFromClaims } from '@kyb-webhooks/core/schemas';
import { KybApiError } from './errors.js';
import { send, type CallOptions, type RawResponse, type RetryPolicy, type TransportOptions } from './http.js';
import {
  DEFAULT_MAX_PAGES,
  linkNext,
  nextPageUrl,
  PageTracker,
  PagingError,
  withParam,
  type PagingOptions,
} from './paging.js';
import {
  InvalidBody,
  decodeClaims,
  parseJson,
  readErrorCode,
  readDeliveries,
  readEvents,
  readListPage,
  readReleaseToken,
  type DeliveryLogEntry,
  type DeliveryLogOptions,
  type StreamEvent,
} from './parse.js';

/**
 * The path prefix of the per-request operations of data requests before path templates existed; it is the prefix of
 * {@link DEFAULT_DATA_REQUEST_PATH}. Kept for `requestPrefix`, which still works (see {@link KybClientOptions}).
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, requestPrefix: DEFAULT_REQUEST_PREFIX })
 * ```
 */
export const DEFAULT_REQUEST_PREFIX = '/api/v1/kyb/data-requests';

/**
 * Where a data request's per-request operations live, `{id}` standing for the request id: deliveries, events and
 * redeliver are `{path}/deliveries`, `{path}/events` and `{path}/redeliver`. The spec shows the release path of data
 * requests (`/api/v1/kyb/data-requests/{requestId}/release`) and only "…" for the others (4.2), so this default
 * mirrors it; change it with {@link KybClientOptions.dataRequestPath}.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, dataRequestPath: DEFAULT_DATA_REQUEST_PATH })
 * ```
 */
export const DEFAULT_DATA_REQUEST_PATH = '/api/v1/kyb/data-requests/{id}';

/**
 * Where a signature request's per-request operations live (`sr_…` streams): the data request default with
 * `signature-requests` in its place, a guess (spec 4.2 shows none); change it with
 * {@link KybClientOptions.signatureRequestPath}.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, signatureRequestPath: DEFAULT_SIGNATURE_REQUEST_PATH })
 * ```
 */
export const DEFAULT_SIGNATURE_REQUEST_PATH = '/api/v1/kyb/signature-requests/{id}';

/**
 * Which kind of request a per-request call is about: it picks the path template. Without it, a request id that
 * starts with `sr_` is a signature request and any other a data request.
 *
 * @example
 * ```ts
 * await client.deliveries('0c5e…', { kind: 'signature_request' })
 * ```
 */
export type RequestKind = 'data_request' | 'signature_request';

/**
 * Options of the per-request calls (`deliveries`, `redeliver`).
 *
 * @example
 * ```ts
 * await client.redeliver(requestId, { kind: 'signature_request', retry: true })
 * ```
 */
export interface RequestCallOptions extends CallOptions {
  /** The request's kind, when its id does not tell (see {@link RequestKind}). */
  kind?: RequestKind;
}

/**
 * Options of {@link KybClient.request}.
 *
 * @example
 * ```ts
 * await client.request('POST', '/api/v1/kyb/data-requests', { body: { fields: ['company_name'] }, retry: true })
 * ```
 */
export interface RequestOptions extends CallOptions {
  /** A JSON body. */
  body?: unknown;
  /** Query parameters, appended to the path. */
  query?: Record<string, string | number | boolean>;
}

/**
 * The answer of {@link KybClient.request}: the status, and the body parsed as JSON (undefined when empty; a text
 * body that is not JSON is refused with `invalid_response`).
 *
 * @example
 * ```ts
 * const { status, body } = await client.request('GET', '/api/v1/kyb/balance')
 * ```
 */
export interface ApiResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

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
  /**
   * Path template of a data request's deliveries, events and redeliver, with `{id}` where the request id goes; default
   * {@link DEFAULT_DATA_REQUEST_PATH}. The spec does not show it (4.2).
   */
  dataRequestPath?: string;
  /** The same for signature requests (`sr_…` streams); default {@link DEFAULT_SIGNATURE_REQUEST_PATH}. */
  signatureRequestPath?: string;
  /**
   * The older way to set the per-request path: a prefix, `{prefix}/{id}/deliveries` and so on, for every kind of
   * request. A template option, when given, wins for its kind.
   */
  requestPrefix?: string;
  /** How list calls page, and the bound on how many pages one call reads; see {@link PagingOptions}. */
  paging?: PagingOptions;
  /** How delivery log entries are read, for a service whose log differs from the defaults; see {@link DeliveryLogOptions}. */
  deliveryLog?: DeliveryLogOptions;
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
  /**
   * An observability layer (`openTelemetry()` of `@kyb-webhooks/opentelemetry`, or your own): each attempt of each
   * API call is its `request` operation (an HTTP CLIENT span), and the release pull's JWKS fetch its `jwks` one. The
   * `kyb-webhooks:client:request` tracing channel publishes the same attempts whether or not this is set.
   */
  telemetry?: ReceiverTelemetry;
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
export interface EventsOptions extends RequestCallOptions {
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
  /**
   * GET {path}/deliveries: every delivery attempt and what the merchant host answered, every page of it (in the
   * order the service lists them). Fails rather than return part of the log.
   */
  deliveries(requestId: string, options?: RequestCallOptions): Promise<DeliveryLogEntry[]>;
  /** GET {path}/events?after_seq=…, paged: yields every event after `afterSeq`, in seq order. */
  events(requestId: string, options?: EventsOptions): AsyncIterableIterator<StreamEvent>;
  /** POST {path}/redeliver: queues the stream's events again; resolves with how many (when told). */
  redeliver(
    requestId: string,
    options?: RequestCallOptions,
  ): Promise<{ queued: number | undefined; [field: string]: unknown }>;
  /** POST /api/v1/kyb/webhook-endpoint/reactivate: clears the quarantine; the backlog is then delivered. */
  reactivate(options?: CallOptions): Promise<{ reactivated: boolean; [field: string]: unknown }>;
  /**
   * Any other call of the API (one the spec does not show, such as creating a data or signature request, or
   * registering the webhook endpoint), with the same authorization, timeouts, retries (GET always, other methods
   * with `retry: true`) and typed errors: a 402 `insufficient_credit` is an `InsufficientCreditError` with the
   * amounts the answer gives. `path` is appended to `baseUrl`.
   */
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
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
  const legacyPrefix =
    options.requestPrefix === undefined ? undefined : '/' + options.requestPrefix.replace(/^\/+|\/+$/g, '') + '/{id}';
  const paths: Record<RequestKind, string> = {
    data_request: trimTemplate(options.dataRequestPath ?? legacyPrefix ?? DEFAULT_DATA_REQUEST_PATH),
    signature_request: trimTemplate(options.signatureRequestPath ?? legacyPrefix ?? DEFAULT_SIGNATURE_REQUEST_PATH),
  };
  const maxPages = options.paging?.maxPages ?? DEFAULT_MAX_PAGES;
  const cursorParam = options.paging?.cursorParam ?? 'cursor';
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
    requests: observersOf('request', options.telemetry),
  };
  // Built now, so a mistake in the attestation options is config_invalid at creation, not at the first release().
  const verify = options.attestation
    ? createAttestationVerifier(
        {
          fetch: fetchImpl,
          ...options.attestation,
          // An inline `jwks` stands alone; only without one does the JWKS come from the API.
          ...(options.attestation.jwks === undefined
            ? { jwksUrl: options.attestation.jwksUrl ?? `${baseUrl}/.well-known/kyb-jwks.json` }
            : {}),
        },
        now,
        undefined,
        options.telemetry,
      )
    : undefined;

  function templateOf(requestId: string, kind: RequestKind | undefined): string {
    return paths[
      kind ?? (typeof requestId === 'string' && requestId.startsWith('sr_') ? 'signature_request' : 'data_request')
    ];
  }

  function requestPath(requestId: string, operation: string, kind: RequestKind | undefined): string {
    const template = templateOf(requestId, kind);
    checkRequestId(requestId, `${operation === 'redeliver' ? 'POST' : 'GET'} ${template}/${operation}`);
    return `${template.replace('{id}', encodeURIComponent(requestId))}/${operation}`;
  }

  /** The call's route for telemetry: the path template, the id left as `{id}`. */
  function requestRoute(requestId: string, operation: string, kind: RequestKind | undefined): string {
    return `${templateOf(requestId, kind)}/${operation}`;
  }

  function invalid(operation: string, cause: InvalidBody | PagingError, attempts: number): KybApiError {
    const code = cause instanceof PagingError ? cause.code : 'invalid_response';
    const message =
      code === 'too_many_pages'
        ? `${operation}: ${cause.message}`
        : `${operation}: unexpected response body: ${cause.message}.`;
    return new KybApiError({ status: 200, code, message, operation, attempts });
  }

  function parsed<T>(operation: string, attempts: number, read: () => T): T {
    try {
      return read();
    } catch (error) {
      // Only the readers' own errors are described; anything else could quote the body.
      const known = error instanceof InvalidBody || error instanceof PagingError;
      throw invalid(operation, known ? error : new InvalidBody('unreadable'), attempts);
    }
  }

  /**
   * Reads a list call page by page (paging.ts), yielding each page's items as `read` takes them. `fallback` is
   * where a page that names no next page goes on (the events call: after the last seq it got).
   */
  async function* listPages<T>(
    first: string,
    names: readonly string[],
    call: CallOptions & { route?: string },
    read: (items: readonly unknown[], offset: number) => T[],
    fallback?: (url: URL, items: readonly T[]) => URL | undefined,
  ): AsyncGenerator<T[]> {
    let url: URL | undefined = new URL(baseUrl + first);
    const operation = `GET ${url.pathname}`;
    const tracker = new PageTracker(maxPages, `the ${names[0]} list`);
    let offset = 0;
    let pages = 0;
    while (url !== undefined) {
      parsed(operation, 0, () => tracker.visit(url!));
      pages++;
      const response: RawResponse = await send(transport, 'GET', url, { ...call, notFoundCode: 'request_not_found' });
      const page = parsed(operation, response.attempts, () =>
        readListPage(response.text, names, response.headers.get('x-next-cursor')),
      );
      const items = parsed(operation, response.attempts, () => read(page.items, offset));
      offset += items.length;
      yield items;
      const current = response.url;
      // Without a fallback the list is read from its start, so what was read can be held against a page's totals.
      const soFar = fallback ? undefined : { entries: offset, pages };
      const link = linkNext(response.headers.get('link'));
      url = parsed(operation, response.attempts, () =>
        nextPageUrl(current, page, link, cursorParam, fallback?.(current, items), soFar),
      );
    }
  }

  async function* events(requestId: string, eventsOptions: EventsOptions = {}): AsyncGenerator<StreamEvent> {
    validateOptions(eventsOptions, EVENTS_OPTIONS);
    const path = requestPath(requestId, 'events', eventsOptions.kind);
    const operation = `GET ${path}`;
    let after = eventsOptions.afterSeq ?? -1;
    const pageSize = eventsOptions.pageSize ?? options.pageSize;
    const query = `?after_seq=${after}${pageSize === undefined ? '' : `&limit=${pageSize}`}`;
    // A page that names no next page: ask for the events after the last one received, until a page comes back empty.
    const afterLast = (url: URL, items: readonly StreamEvent[]) =>
      items.length === 0 ? undefined : withParam(url, 'after_seq', String(after));
    const route = requestRoute(requestId, 'events', eventsOptions.kind);
    for await (const page of listPages(path + query, ['events'], { ...eventsOptions, route }, readEvents, afterLast)) {
      for (const event of page) {
        // A page that does not move forward would page forever.
        if (event.seq <= after)
          throw invalid(operation, new InvalidBody(`events out of order (seq ${event.seq} after ${after})`), 1);
        // The stream of this request only: an event of another stream handed to receiver.replay would run as if it
        // were part of this one, and nothing but the HMAC (absent on fetched events) binds an unattested type to it.
        if (event.stream_id !== requestId)
          throw invalid(operation, new InvalidBody(`an event of another stream (seq ${event.seq})`), 1);
        after = event.seq;
        yield event;
      }
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
      const route = '/api/v1/kyb/data-requests/{id}/release';
      const response = await send(transport, 'GET', path, { ...call, route, accept: [404, 410] });
      if (response.status === 410) return { status: 'payload_expired' };
      if (response.status === 404) return releaseNotFound(response, operation);
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
        // A binding's detail names claims, never values: it says which (e.g. where the answers were looked for).
        const detail = (error as { detail?: unknown }).detail;
        const why = reason === 'attestation_relabelled' && typeof detail === 'string' ? `${reason}: ${detail}` : reason;
        throw new KybApiError({
          status: 200,
          code: reason === 'jwks_unavailable' ? 'jwks_unavailable' : 'attestation_rejected',
          message: `${operation}: the release's attestation was rejected (${why}); it is not a genuine release of this request.`,
          operation,
          attempts: response.attempts,
          cause: error,
        });
      }
      return {
        status: 'released',
        claims,
        answers: answersFromClaims(claims, options.attestation?.answersClaim),
        token,
      };
    },

    async deliveries(requestId, call) {
      validateOptions(call, REQUEST_CALL_OPTIONS);
      const path = requestPath(requestId, 'deliveries', call?.kind);
      const entries: DeliveryLogEntry[] = [];
      const read = (items: readonly unknown[], offset: number) => readDeliveries(items, options.deliveryLog, offset);
      const route = requestRoute(requestId, 'deliveries', call?.kind);
      for await (const page of listPages(path, ['deliveries'], { ...call, route }, read)) entries.push(...page);
      return entries;
    },

    events,

    async redeliver(requestId, call) {
      validateOptions(call, REQUEST_CALL_OPTIONS);
      const path = requestPath(requestId, 'redeliver', call?.kind);
      const route = requestRoute(requestId, 'redeliver', call?.kind);
      const response = await send(transport, 'POST', path, { ...call, route, notFoundCode: 'request_not_found' });
      const body = answerFields(response.text);
      return { ...body, queued: typeof body.queued === 'number' ? body.queued : undefined };
    },

    async reactivate(call) {
      const path = '/api/v1/kyb/webhook-endpoint/reactivate';
      validateOptions(call, CALL_OPTIONS);
      const response = await send(transport, 'POST', path, call);
      const body = answerFields(response.text);
      // A 2xx is the confirmation; a body that says otherwise explicitly wins.
      return { ...body, reactivated: body.reactivated !== false };
    },

    async request(method, path, call) {
      validateOptions(call, REQUEST_OPTIONS);
      const verb = checkMethod(method);
      const target = checkApiPath(path) + queryString(call?.query);
      const response = await send(transport, verb, target, call);
      const text = response.text.trim();
      const body = text === '' ? undefined : parsed(`${verb} ${path}`, response.attempts, () => parseJson(text));
      return { status: response.status, body, headers: response.headers };
    },
  };
}

/** An HTTP method token, upper-cased (`post` → `POST`). */
function checkMethod(method: unknown): string {
  if (typeof method === 'string' && /^[A-Za-z]{1,16}$/.test(method)) return method.toUpperCase();
  throw new KybWebhookError(
    'config_invalid',
    `KybClient.request: method must be an HTTP method such as 'GET' or 'POST'; got ${describeValue(method)}.`,
  );
}

/**
 * A path of the API, appended to baseUrl: it starts with one "/" and has no "." or ".." segment, query or fragment,
 * so the call (and the API key) stays on the API (a "//host" path would name another host).
 */
function checkApiPath(path: unknown): string {
  const fix =
    "a path of the KYB API starting with '/', e.g. '/api/v1/kyb/data-requests' (query parameters go in `query`)";
  if (
    typeof path !== 'string' ||
    !path.startsWith('/') ||
    path.startsWith('//') ||
    /[?#\\]/.test(path) ||
    !/^[\x21-\x7e]*$/.test(path)
  ) {
    throw new KybWebhookError(
      'config_invalid',
      `KybClient.request: path must be ${fix}; got ${typeof path === 'string' ? 'a string that is not one' : describeValue(path)}.`,
    );
  }
  if (
    path
      .split('/')
      .some((segment) => segment === '.' || segment === '..' || /^%2e(%2e)?$|^\.%2e$|^%2e\.$/i.test(segment))
  ) {
    throw new KybWebhookError(
      'config_invalid',
      `KybClient.request: path must not have "." or ".." segments: use ${fix}.`,
    );
  }
  return path;
}

function queryString(query: RequestOptions['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A path template without its trailing slashes ("/x/{id}/" → "/x/{id}"). */
function trimTemplate(template: string): string {
  return '/' + template.replace(/^\/+|\/+$/g, '');
}

/**
 * A request id as a path segment: any non-empty string, percent-encoded, except `.` and `..`, which a URL resolves
 * as "this folder" and "the parent", sending the call (and the API key) to another endpoint.
 */
function checkRequestId(requestId: unknown, operation: string): asserts requestId is string {
  if (typeof requestId === 'string' && requestId !== '' && requestId !== '.' && requestId !== '..') return;
  const what =
    typeof requestId === 'string'
      ? requestId === ''
        ? 'an empty string'
        : `"${requestId}"`
      : describeValue(requestId);
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
  "use the KYB API's {base_url}, e.g. 'https://api.kyb.example.com' (http: only on 127.0.0.1, localhost or " +
    '[::1]; the API key goes in `apiKey`, never in the URL)',
  'which would send the API key in clear text',
);

// The API's address, to which every path is appended: a secure URL without credentials, query or fragment.
const baseUrlRule: OptionRule = (value, path, report) => {
  const problem = serviceUrl(value, path, report);
  if (problem !== undefined) return problem;
  // The URL is never repeated in these messages; serviceUrl refused credentials (the API key goes in `apiKey`).
  const url = new URL(String(value));
  if (url.search !== '' || url.hash !== '')
    return "must not have a query or fragment (paths are appended to it): use the KYB API's {base_url}.";
  return undefined;
};

const apiKeyRule: OptionRule = (value) => {
  const fix = 'the API key from the KYB dashboard';
  if (typeof value !== 'string')
    return `must be ${fix} (a string); got ${describeValue(value)} (an unset environment variable?).`;
  if (value === '') return `is empty: set it to ${fix} (an unset environment variable?).`;
  if (value !== value.trim())
    return `has leading or trailing whitespace (a line break from a file?): trim it. It is sent as the Authorization header as is.`;
  // Header values are visible ASCII; anything else makes fetch throw with the value in its message.
  if (!/^[\x20-\x7e]+$/.test(value))
    return `contains characters a header cannot carry (a line break, a control or non-ASCII character): use ${fix}, as printed there.`;
  return undefined;
};

const delayMs = optionRules.delayMs();

// A per-request path: a URL path holding `{id}` exactly once, as a whole segment, where the request id goes.
const pathTemplateRule: OptionRule = (value, path, report) => {
  const problem = optionRules.urlPath()(value, path, report);
  if (problem !== undefined) return problem;
  const segments = String(value).split('/');
  if (segments.filter((segment) => segment === '{id}').length !== 1 || String(value).split('{id}').length !== 2) {
    return "must hold {id} once, as a whole segment, where the request id goes: e.g. '/api/v1/kyb/data-requests/{id}'.";
  }
  return undefined;
};

const queryParamRule: OptionRule = (value) =>
  typeof value === 'string' && /^[A-Za-z0-9_.[\]-]{1,64}$/.test(value)
    ? undefined
    : `must be a query parameter name such as 'cursor'; got ${describeValue(value)}.`;

const fieldNameRule: OptionRule = (value) =>
  typeof value === 'string' && value !== '' && value.length <= 128
    ? undefined
    : `must be the name of a field of the entries, e.g. 'seq'; got ${describeValue(value)}.`;

const CLIENT_OPTIONS = {
  owner: 'createKybClient',
  example: "createKybClient({ baseUrl: 'https://api.kyb.example.com', apiKey: process.env.KYB_API_KEY })",
  options: {
    baseUrl: optionRules.required(
      baseUrlRule,
      "set it to the KYB API's {base_url}, e.g. 'https://api.kyb.example.com'.",
    ),
    apiKey: optionRules.required(
      apiKeyRule,
      'set it to the API key from the KYB dashboard (an unset environment variable?).',
    ),
    attestation: optionRules.object("the receiver's attestation options, { issuer, audience }"),
    requestPrefix: optionRules.urlPath(),
    dataRequestPath: pathTemplateRule,
    signatureRequestPath: pathTemplateRule,
    paging: optionRules.fields({
      options: { maxPages: optionRules.positiveInteger('pages'), cursorParam: queryParamRule },
      aliases: { pageLimit: 'maxPages', cursorParameter: 'cursorParam' },
    }),
    deliveryLog: optionRules.fields({
      options: {
        eventIdField: fieldNameRule,
        seqField: fieldNameRule,
        statusField: fieldNameRule,
        acknowledged: optionRules.func('(entry) => boolean | undefined'),
      },
      aliases: {},
    }),
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
    telemetry: optionRules.methods(
      ['around'],
      'an observability layer with around(operation, trace, run), e.g. openTelemetry() from @kyb-webhooks/opentelemetry',
    ),
  },
  aliases: {
    baseURL: 'baseUrl',
    url: 'baseUrl',
    apiUrl: 'baseUrl',
    key: 'apiKey',
    token: 'apiKey',
    timeout: 'timeoutMs',
    maxRetries: 'retry.maxRetries',
  },
} as const;

const callOptionRules = {
  signal: optionRules.object('an AbortSignal'),
  timeoutMs: optionRules.timerMs(),
  retry: optionRules.boolean(),
};

const requestKindRule: OptionRule = (value) =>
  value === 'data_request' || value === 'signature_request'
    ? undefined
    : `must be 'data_request' or 'signature_request'; got ${describeValue(value)}.`;

const REQUEST_CALL_OPTIONS = {
  owner: 'KybClient call options',
  example: "{ kind: 'signature_request', signal }",
  optional: true,
  options: { ...callOptionRules, kind: requestKindRule },
  aliases: { timeout: 'timeoutMs' },
} as const;

const REQUEST_OPTIONS = {
  owner: 'KybClient.request options',
  example: "{ body: { fields: ['company_name'] }, retry: true }",
  optional: true,
  options: {
    ...callOptionRules,
    body: () => undefined,
    query: optionRules.object('query parameters, { name: value }'),
  },
  aliases: { timeout: 'timeoutMs', json: 'body', data: 'body', params: 'query' },
} as const;

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
  options: {
    ...callOptionRules,
    kind: requestKindRule,
    afterSeq: optionRules.wholeNumber(-1, 'seq'),
    pageSize: optionRules.positiveInteger('events'),
  },
  aliases: { after: 'afterSeq', after_seq: 'afterSeq', timeout: 'timeoutMs', limit: 'pageSize' },
} as const;

/**
 * What a 404 of the release pull means. Empty, JSON without a code, or `not_released`: not released yet (spec 4.2).
 * A body that is not JSON (an HTML "Not Found" page) is not the API's answer but that of a server the call should not
 * have reached; read as "not released" it would stay so forever, so it is an error naming where to look.
 */
function releaseNotFound(response: RawResponse, operation: string): ReleaseResult {
  const text = response.text.trim();
  const code = readErrorCode(text);
  if (code === 'not_released' || (code === undefined && isJsonOrEmpty(text))) return { status: 'not_released' };
  const message =
    code === undefined
      ? `${operation}: 404 (request_not_found) with a body that is not JSON, so not the KYB API's "not released". ` +
        'Check the baseUrl option and its path prefix: the release is asked at ' +
        '{baseUrl}/api/v1/kyb/data-requests/{id}/release.'
      : `${operation}: the KYB API answered 404 (${code}).`;
  const fields = { status: 404, operation, attempts: response.attempts };
  throw new KybApiError({ ...fields, code: code ?? 'request_not_found', message });
}

function isJsonOrEmpty(text: string): boolean {
  if (text === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The fields of a 2xx answer to redeliver or reactivate, as far as it has any. The spec shows neither body (4.2) and
 * the 2xx is the confirmation, so a body that is empty, not JSON or not an object ("OK", `null`, `[1]`) has none:
 * failing the call would report as undone (and have retried) what the service did.
 */
function answerFields(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
