/*
 * Lenient, typed readers of the API's bodies. The spec does not show these bodies (4.2), so each reader takes the
 * shapes a service could plausibly send, checks the fields the client relies on, and keeps every other field.
 */

/**
 * One delivery attempt as the deliveries call lists it. Fields beyond these are kept as `unknown`.
 *
 * @example
 * ```ts
 * const failed = (await client.deliveries(requestId)).filter((d) => d.status === null || d.status >= 300)
 * ```
 */
export interface DeliveryLogEntry {
  event_id: string;
  seq: number;
  event?: string;
  /** 1-based attempt number (Service-Delivery-Attempt). */
  attempt?: number;
  /** Unix seconds. */
  attempted_at?: number;
  /** What the merchant host answered, or null when the connection failed. */
  status?: number | null;
  error?: string;
  duration_ms?: number;
  [field: string]: unknown;
}

/**
 * An event as the events call returns it: the full envelope of spec 2.3 (with its attestation on attested types).
 * Not verified by the client: run it through the receiver, which verifies it like any delivery.
 *
 * @example
 * ```ts
 * for await (const event of client.events(requestId, { afterSeq: cursor })) await receiver.replay(event)
 * ```
 */
export interface StreamEvent {
  event: string;
  event_id: string;
  stream_id: string;
  seq: number;
  timestamp?: number;
  api_version?: string;
  data: Record<string, unknown>;
  attestation?: string;
  [field: string]: unknown;
}

/** A page of the events call. */
export interface EventsPage {
  events: StreamEvent[];
  /** Undefined when the service did not say; the client then asks again until a page comes back empty. */
  hasMore: boolean | undefined;
}

/** Thrown by the readers; the client turns it into a KybApiError `invalid_response`. */
export class InvalidBody extends Error {}

/**
 * The error code of an error body: `{error:{code}}`, `{code}` or `{error:"code"}`. Only a value shaped like a code
 * counts: a service that puts a message in `error` may echo request data in it, which must not reach logs.
 */
export function readErrorCode(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(body)) return undefined;
  const { error, code } = body;
  const candidates = [isObject(error) ? error.code : undefined, code, error];
  const found = candidates.find((candidate): candidate is string => typeof candidate === 'string');
  return found !== undefined && ERROR_CODE.test(found) ? found : undefined;
}

const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** `{ deliveries: [...] }` or a bare list. */
export function readDeliveries(text: string): DeliveryLogEntry[] {
  const body = parseJson(text);
  const list = Array.isArray(body) ? body : isObject(body) ? (body.deliveries ?? body.data) : undefined;
  if (!Array.isArray(list)) throw new InvalidBody('deliveries: expected a list');
  return list.map((entry, index) => {
    if (!isObject(entry)) throw new InvalidBody(`deliveries[${index}] is not an object`);
    const where = `deliveries[${index}]`;
    expect(typeof entry.event_id === 'string', where, 'event_id');
    expect(Number.isInteger(entry.seq), where, 'seq');
    optional(entry, 'event', 'string', where);
    optional(entry, 'attempt', 'number', where);
    optional(entry, 'attempted_at', 'number', where);
    optional(entry, 'error', 'string', where);
    optional(entry, 'duration_ms', 'number', where);
    expect(entry.status === undefined || entry.status === null || typeof entry.status === 'number', where, 'status');
    return entry as DeliveryLogEntry;
  });
}

/** `{ events: [...], has_more }` or a bare list. */
export function readEventsPage(text: string): EventsPage {
  const body = parseJson(text);
  const list = Array.isArray(body) ? body : isObject(body) ? (body.events ?? body.data) : undefined;
  if (!Array.isArray(list)) throw new InvalidBody('events: expected a list');
  const hasMore = isObject(body) ? (body.has_more ?? body.hasMore) : undefined;
  const events = list.map((entry, index) => {
    if (!isObject(entry)) throw new InvalidBody(`events[${index}] is not an object`);
    const where = `events[${index}]`;
    expect(typeof entry.event === 'string', where, 'event');
    expect(typeof entry.event_id === 'string', where, 'event_id');
    expect(typeof entry.stream_id === 'string', where, 'stream_id');
    expect(Number.isInteger(entry.seq), where, 'seq');
    expect(isObject(entry.data), where, 'data');
    optional(entry, 'timestamp', 'number', where);
    optional(entry, 'api_version', 'string', where);
    optional(entry, 'attestation', 'string', where);
    return entry as StreamEvent;
  });
  return { events, hasMore: typeof hasMore === 'boolean' ? hasMore : undefined };
}

/**
 * The release token: `{ "attestation": "<jwt>" }` (also `token` or `jwt`) as JSON, or the bare JWT as the body
 * (application/jwt or text, optionally a JSON string).
 */
export function readReleaseToken(text: string, contentType: string): string {
  const trimmed = text.trim();
  const body = /json/i.test(contentType) || trimmed.startsWith('{') || trimmed.startsWith('"') ? parseJson(trimmed) : trimmed;
  if (typeof body === 'string' && looksLikeJwt(body)) return body;
  if (isObject(body)) {
    for (const name of ['attestation', 'token', 'jwt']) {
      const value = body[name];
      if (typeof value === 'string' && looksLikeJwt(value)) return value;
    }
  }
  throw new InvalidBody('release: no attestation JWT in the body');
}

/** The claims of a compact JWS, decoded without verification (only to learn which event it claims to be). */
export function decodeClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  let decoded: unknown;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '=');
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
    decoded = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new InvalidBody('release: the attestation claims are not base64url JSON');
  }
  if (!isObject(decoded)) throw new InvalidBody('release: the attestation claims are not a JSON object');
  return decoded;
}

function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidBody('the body is not JSON');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expect(ok: boolean, where: string, field: string): void {
  if (!ok) throw new InvalidBody(`${where}.${field} is missing or of the wrong type`);
}

function optional(entry: Record<string, unknown>, field: string, type: 'string' | 'number', where: string): void {
  expect(entry[field] === undefined || typeof entry[field] === type, where, field);
}
