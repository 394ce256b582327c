import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestEnvelope } from '../fixtures.js';
import { KYB_JWKS_PATH } from '../jwks-server.js';
import type { Jwks } from '../keys.js';
import { shapeDelivery, shapeEvent, shapePage, type ApiShape } from './api-shape.js';
import type { ServiceDeliveryAttempt } from './delivery.js';

/**
 * The fixed path prefix of the release pull (spec 4.2): `{RELEASE_PATH_PREFIX}/{requestId}/release`.
 *
 * @example
 * ```ts
 * await fetch(`${service.baseUrl}${RELEASE_PATH_PREFIX}/${id}/release`, { headers: { authorization: service.apiKey } })
 * ```
 */
export const RELEASE_PATH_PREFIX = '/api/v1/kyb/data-requests';
/**
 * The local service's default path prefix of signature requests' per-request operations (the spec does not show
 * it, 4.2): `{SIGNATURE_REQUEST_PATH_PREFIX}/{requestId}/events` and so on, the client's default too.
 *
 * @example
 * ```ts
 * await fetch(`${service.baseUrl}${SIGNATURE_REQUEST_PATH_PREFIX}/${id}/deliveries`, { headers: { authorization: service.apiKey } })
 * ```
 */
export const SIGNATURE_REQUEST_PATH_PREFIX = '/api/v1/kyb/signature-requests';
/**
 * The fixed path of reactivation (spec 4.2).
 *
 * @example
 * ```ts
 * await fetch(service.baseUrl + REACTIVATE_PATH, { method: 'POST', headers: { authorization: service.apiKey } })
 * ```
 */
export const REACTIVATE_PATH = '/api/v1/kyb/webhook-endpoint/reactivate';

/**
 * One API call the local service answered, as it records it. The Authorization header is never recorded, only
 * whether it was right.
 *
 * @example
 * ```ts
 * expect(service.apiCalls.map((c) => `${c.method} ${c.status}`)).toEqual(['GET 503', 'GET 200'])
 * ```
 */
export interface ApiCall {
  method: string;
  /** Path and query, e.g. `/api/v1/kyb/data-requests/dr_1/events?after_seq=99`. */
  path: string;
  status: number;
  authorized: boolean;
  /** Unix milliseconds. */
  at: number;
}

/**
 * A canned failure for the next API calls: answer `status` (with Retry-After when given) instead of the real
 * answer, optionally after a delay; with only `delayMs`, answer normally but late (for client timeout tests).
 *
 * @example
 * ```ts
 * service.failNextApiCalls(2, { status: 503, retryAfter: '1' })
 * service.failNextApiCalls(1, { delayMs: 500 }) // slow, then the real answer
 * ```
 */
export interface ApiFault {
  status?: number;
  /** The Retry-After header value, as sent: seconds or an HTTP date. */
  retryAfter?: string;
  delayMs?: number;
  /** The error code in the body; default `service_unavailable` for 503, else `injected_failure`. */
  code?: string;
}

/** What the HTTP layer needs from the service's state. */
export interface ApiBackend {
  apiKey: string;
  /** Path prefix of data requests' (and business streams') per-request operations. */
  prefix: string;
  /** Path prefix of signature requests' per-request operations. */
  signaturePrefix: string;
  /** The shape of list answers, read at each call (a test may change it). */
  apiShape(): ApiShape;
  /** The kind of a request, undefined when there is none with this id. */
  kind(requestId: string): 'data_request' | 'signature_request' | 'business' | undefined;
  /** Whether a request's released values were purged. */
  purged(requestId: string): boolean;
  jwks(): Jwks;
  countJwksRequest(): void;
  eventsPageLimit: number;
  maxEventsPageLimit: number;
  takeFault(): ApiFault | undefined;
  record(call: ApiCall): void;
  now(): number;
  release(
    requestId: string,
  ): { status: 'released'; token: string } | { status: 'not_released' | 'payload_expired' | 'not_found' };
  events(requestId: string): readonly TestEnvelope[] | undefined;
  deliveries(requestId: string): readonly ServiceDeliveryAttempt[] | undefined;
  redeliver(requestId: string): number | undefined;
  reactivate(): boolean;
  /** Creates a data request (the spec does not show creation): the id, or a refusal such as 402. */
  createDataRequest(input: {
    id?: string;
    priceCents?: number;
  }): Promise<
    { id: string } | { status: number; code: string; message: string; details?: Record<string, unknown> | undefined }
  >;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> | undefined };

/** Routes one request of the local service: the KYB JWKS, then the API behind the Authorization check. */
export async function handleRequest(
  backend: ApiBackend,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  // The Host header gives the port, so the next-page URLs the service names are on its own origin.
  const host = /^[A-Za-z0-9.:[\]-]{1,255}$/.test(request.headers.host ?? '') ? request.headers.host : '127.0.0.1';
  const url = new URL(request.url ?? '/', `http://${host}`);
  const method = request.method ?? 'GET';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Read to the end either way (an unread body stalls keep-alive), but keep at most 64 KiB.
    if (size <= 64 * 1024) chunks.push(chunk);
  }
  const bodyText = size <= 64 * 1024 ? Buffer.concat(chunks).toString('utf8') : undefined;

  if (url.pathname === KYB_JWKS_PATH) {
    backend.countJwksRequest();
    return send(
      response,
      method === 'GET' || method === 'HEAD' ? { status: 200, body: backend.jwks() } : methodNotAllowed(),
    );
  }
  const isApi =
    url.pathname.startsWith('/api/') ||
    url.pathname.startsWith(backend.prefix + '/') ||
    url.pathname.startsWith(backend.signaturePrefix + '/');
  if (!isApi) return send(response, error(404, 'not_found', 'No such route on the local KYB service.'));

  const fault = backend.takeFault();
  if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
  if (response.destroyed) return;
  const authorized = request.headers.authorization === backend.apiKey;
  let reply: Reply;
  if (fault?.status !== undefined) {
    reply = error(
      fault.status,
      fault.code ?? (fault.status === 503 ? 'service_unavailable' : 'injected_failure'),
      'Injected failure.',
    );
    if (fault.retryAfter !== undefined) reply.headers = { 'retry-after': fault.retryAfter };
  } else if (!authorized) {
    reply = error(401, 'unauthorized', 'Send the API key as the raw Authorization header value (no "Bearer").');
  } else {
    reply = await route(backend, method, url, bodyText);
  }
  backend.record({ method, path: url.pathname + url.search, status: reply.status, authorized, at: backend.now() });
  send(response, reply);
}

async function route(backend: ApiBackend, method: string, url: URL, bodyText: string | undefined): Promise<Reply> {
  const path = url.pathname;
  if (path === backend.prefix) {
    if (method !== 'POST') return methodNotAllowed();
    return create(backend, bodyText);
  }
  if (path === REACTIVATE_PATH) {
    if (method !== 'POST') return methodNotAllowed();
    const wasQuarantined = backend.reactivate();
    return { status: 200, body: { reactivated: true, was_quarantined: wasQuarantined } };
  }
  const release = matchOperation(path, RELEASE_PATH_PREFIX);
  if (release?.operation === 'release') {
    if (method !== 'GET') return methodNotAllowed();
    const result = backend.release(release.requestId);
    if (result.status === 'released') return { status: 200, body: { attestation: result.token } };
    if (result.status === 'payload_expired') {
      return error(410, 'payload_expired', 'The released values were purged; create a new request.');
    }
    if (result.status === 'not_found') return error(404, 'request_not_found', 'No data request with this id.');
    return error(404, 'not_released', 'The data request has not been released.');
  }
  const operation = matchOperation(path, backend.prefix) ?? matchOperation(path, backend.signaturePrefix);
  if (!operation) return error(404, 'not_found', 'No such route on the local KYB service.');
  const { requestId } = operation;
  // Each kind of request lives under its own prefix (a real service would not find a signature request among data
  // requests): a client that picks the wrong path gets the 404 it would get there.
  const kind = backend.kind(requestId);
  const separate = backend.signaturePrefix !== backend.prefix;
  const underSignatures = path.startsWith(backend.signaturePrefix + '/');
  if (kind === undefined || (separate && (kind === 'signature_request') !== underSignatures)) return requestNotFound();
  const shape = backend.apiShape();
  switch (operation.operation) {
    case 'deliveries': {
      if (method !== 'GET') return methodNotAllowed();
      const attempts = backend.deliveries(requestId);
      if (!attempts) return requestNotFound();
      const records = deliveryRecords(attempts, shape.nullFields ? (backend.events(requestId) ?? []) : []);
      const ordered = shape.deliveriesOrder === 'newest_first' ? records.reverse() : records;
      const page = shapePage(
        shape,
        'deliveries',
        ordered.map((record) => shapeDelivery(shape, record)),
        url,
        shape.deliveriesPageSize ?? Math.max(ordered.length, 1),
      );
      return 'status' in page ? error(400, 'invalid_request', page.message) : { status: 200, ...page };
    }
    case 'events': {
      if (method !== 'GET') return methodNotAllowed();
      const afterSeq = integerParameter(url, 'after_seq', -1);
      const limit = integerParameter(url, 'limit', backend.eventsPageLimit);
      if (afterSeq === undefined || limit === undefined || limit < 1) {
        return error(400, 'invalid_request', 'after_seq must be an integer and limit a positive integer.');
      }
      const events = backend.events(requestId);
      if (!events) return requestNotFound();
      const purged = backend.purged(requestId);
      const after = events
        .filter((event) => event.seq > afterSeq)
        .map((event) => shapeEvent(shape, { ...event }, purged));
      const page = shapePage(shape, 'events', after, url, Math.min(limit, backend.maxEventsPageLimit));
      return 'status' in page ? error(400, 'invalid_request', page.message) : { status: 200, ...page };
    }
    case 'redeliver': {
      if (method !== 'POST') return methodNotAllowed();
      const queued = backend.redeliver(requestId);
      if (queued === undefined) return requestNotFound();
      return { status: 202, body: { queued } };
    }
    default:
      return error(404, 'not_found', 'No such route on the local KYB service.');
  }
}

async function create(backend: ApiBackend, bodyText: string | undefined): Promise<Reply> {
  let input: unknown = {};
  try {
    if (bodyText === undefined) throw new Error('too large');
    if (bodyText.trim() !== '') input = JSON.parse(bodyText);
  } catch {
    return error(400, 'invalid_request', 'Send a JSON object (at most 64 KiB), e.g. {"price_cents": 500}.');
  }
  const { id, price_cents: priceCents } = (typeof input === 'object' && input !== null ? input : {}) as Record<
    string,
    unknown
  >;
  if ((id !== undefined && typeof id !== 'string') || (priceCents !== undefined && !Number.isInteger(priceCents))) {
    return error(400, 'invalid_request', 'id must be a string and price_cents an integer.');
  }
  const result = await backend.createDataRequest({
    ...(typeof id === 'string' ? { id } : {}),
    ...(typeof priceCents === 'number' ? { priceCents } : {}),
  });
  if ('id' in result) return { status: 201, body: { id: result.id, request_id: result.id, state: 'pending_approval' } };
  return error(result.status, result.code, result.message, result.details);
}

/**
 * The delivery log of a request, oldest first: one record per attempt and, when `queued` is given (the null-fields
 * shape), a synthetic record with `"attempt": null` for each event not attempted yet.
 */
function deliveryRecords(
  attempts: readonly ServiceDeliveryAttempt[],
  queued: readonly TestEnvelope[],
): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = attempts.map((attempt) => ({
    event_id: attempt.eventId,
    event: attempt.event,
    seq: attempt.seq,
    attempt: attempt.attempt,
    attempted_at: Math.floor(attempt.attemptedAt / 1000),
    status: attempt.status,
    ...(attempt.error === undefined ? {} : { error: attempt.error }),
    ...(attempt.responseCode === undefined ? {} : { response_code: attempt.responseCode }),
    duration_ms: Math.round(attempt.durationMs),
  }));
  const attempted = new Set(attempts.map((attempt) => attempt.eventId));
  for (const event of queued) {
    if (attempted.has(event.event_id)) continue;
    records.push({
      event_id: event.event_id,
      event: event.event,
      seq: event.seq,
      attempt: null,
      attempted_at: null,
      status: null,
      error: 'not attempted yet',
    });
  }
  return records;
}

function matchOperation(path: string, prefix: string): { requestId: string; operation: string } | undefined {
  if (!path.startsWith(prefix + '/')) return undefined;
  const rest = path.slice(prefix.length + 1).split('/');
  if (rest.length !== 2 || !rest[0] || !rest[1]) return undefined;
  return { requestId: decodeURIComponent(rest[0]), operation: rest[1] };
}

function integerParameter(url: URL, name: string, fallback: number): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  return /^-?\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

function error(status: number, code: string, message: string, details?: Record<string, unknown>): Reply {
  return { status, body: { error: { code, message, ...details } } };
}

function requestNotFound(): Reply {
  return error(404, 'request_not_found', 'No request with this id.');
}

function methodNotAllowed(): Reply {
  return error(405, 'method_not_allowed', 'Method not allowed on this route.');
}

function send(response: ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body);
  response.writeHead(reply.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  });
  response.end(text);
}
