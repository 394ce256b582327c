import {
  answersFromClaims,
  createAttestationVerifier,
  type AttestationClaims,
  type AttestationOptions,
  type ReleasedAnswers,
} from '@kyb-webhooks/core';
import { KybApiError } from './errors.js';
import { send, type CallOptions, type RetryPolicy, type TransportOptions } from './http.js';
import {
  InvalidBody,
  decodeClaims,
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
  if (!options || typeof options.apiKey !== 'string' || options.apiKey === '') {
    throw new TypeError('createKybClient: apiKey is required (the API key from the KYB dashboard).');
  }
  let base: URL;
  try {
    base = new URL(String(options.baseUrl));
  } catch {
    throw new TypeError('createKybClient: baseUrl must be an absolute URL such as https://api.kyb.example.com.');
  }
  const baseUrl = base.href.replace(/\/+$/, '');
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
  };
  let verify: ReturnType<typeof createAttestationVerifier> | undefined;

  function verifier(): ReturnType<typeof createAttestationVerifier> {
    if (verify) return verify;
    if (!options.attestation) {
      throw new TypeError('createKybClient: pass attestation: { issuer, audience } to verify releases (the receiver\'s attestation options).');
    }
    verify = createAttestationVerifier(
      { fetch: fetchImpl, ...options.attestation, jwksUrl: options.attestation.jwksUrl ?? `${baseUrl}/.well-known/kyb-jwks.json` },
      now,
    );
    return verify;
  }

  function requestPath(requestId: string, operation: string): string {
    if (typeof requestId !== 'string' || requestId === '') throw new TypeError('requestId must be a non-empty string.');
    return `${prefix}/${encodeURIComponent(requestId)}/${operation}`;
  }

  function invalid(operation: string, cause: unknown): KybApiError {
    const detail = cause instanceof InvalidBody ? `: ${cause.message}` : '';
    return new KybApiError({ status: 200, code: 'invalid_response', message: `${operation}: unexpected response body${detail}.`, operation, attempts: 1, cause });
  }

  function parsed<T>(operation: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw invalid(operation, error);
    }
  }

  async function* events(requestId: string, eventsOptions: EventsOptions = {}): AsyncGenerator<StreamEvent> {
    let after = eventsOptions.afterSeq ?? -1;
    const pageSize = eventsOptions.pageSize ?? options.pageSize;
    for (;;) {
      const query = `?after_seq=${after}${pageSize === undefined ? '' : `&limit=${pageSize}`}`;
      const path = requestPath(requestId, 'events');
      const response = await send(transport, 'GET', path + query, eventsOptions);
      const page = parsed(`GET ${path}`, () => readEventsPage(response.text));
      for (const event of page.events) {
        // A page that does not move forward would page forever.
        if (event.seq <= after) throw invalid(`GET ${path}`, new InvalidBody(`events out of order (seq ${event.seq} after ${after})`));
        after = event.seq;
        yield event;
      }
      if (page.events.length === 0 || page.hasMore === false) return;
    }
  }

  return {
    async release(requestId, call = {}) {
      if (typeof requestId !== 'string' || requestId === '') throw new TypeError('requestId must be a non-empty string.');
      const check = verifier();
      const path = `/api/v1/kyb/data-requests/${encodeURIComponent(requestId)}/release`;
      const operation = `GET ${path}`;
      const response = await send(transport, 'GET', path, { ...call, accept: [404, 410] });
      if (response.status === 410) return { status: 'payload_expired' };
      if (response.status === 404) {
        const code = readErrorCode(response.text);
        if (code === undefined || code === 'not_released') return { status: 'not_released' };
        throw new KybApiError({ status: 404, code, message: `${operation}: the KYB API answered 404 (${code}).`, operation, attempts: 1 });
      }
      const token = parsed(operation, () => readReleaseToken(response.text, response.contentType));
      const unverified = parsed(operation, () => decodeClaims(token));
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
        claims = await check(token, envelope, { fetched: true });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const reason = typeof code === 'string' ? code : 'attestation_invalid';
        throw new KybApiError({
          status: 200,
          code: reason === 'jwks_unavailable' ? 'jwks_unavailable' : 'attestation_rejected',
          message: `${operation}: the release's attestation was rejected (${reason}); it is not a genuine release of this request.`,
          operation,
          attempts: 1,
          cause: error,
        });
      }
      return { status: 'released', claims, answers: answersFromClaims(claims), token };
    },

    async deliveries(requestId, call) {
      const path = requestPath(requestId, 'deliveries');
      const response = await send(transport, 'GET', path, call);
      return parsed(`GET ${path}`, () => readDeliveries(response.text));
    },

    events,

    async redeliver(requestId, call) {
      const path = requestPath(requestId, 'redeliver');
      const response = await send(transport, 'POST', path, call);
      const body = parsed(`POST ${path}`, () => objectBody(response.text));
      return { ...body, queued: typeof body.queued === 'number' ? body.queued : undefined };
    },

    async reactivate(call) {
      const path = '/api/v1/kyb/webhook-endpoint/reactivate';
      const response = await send(transport, 'POST', path, call);
      const body = parsed(`POST ${path}`, () => objectBody(response.text));
      // A 2xx is the confirmation; a body that says otherwise explicitly wins.
      return { ...body, reactivated: body.reactivated !== false };
    },
  };
}

function objectBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidBody('expected a JSON object');
  return body as Record<string, unknown>;
}
