/*
 * Lenient, typed readers of the API's bodies. The spec does not show these bodies (4.2), so each reader takes the
 * shapes a service could plausibly send, checks the fields the client relies on, and keeps every other field.
 */

/**
 * One delivery attempt as the deliveries call lists it (spec 4.2; its shape is not shown). The client reads only what
 * it acts on: `event_id`, `seq` (an integer, or a string of one such as `"3"`) and whether the attempt was
 * acknowledged. Every other field is the service's, kept as it came, whatever its type (`"error": null`,
 * `"attempt": "1"`, an ISO `attempted_at` …).
 *
 * @example
 * ```ts
 * const failed = (await client.deliveries(requestId)).filter((d) => !d.acknowledged)
 * ```
 */
export interface DeliveryLogEntry {
  event_id: string;
  /** The event's seq, read as a number (a numeric string such as `"3"` is accepted). */
  seq: number;
  /**
   * Whether the merchant host acknowledged this attempt with a 2xx, as the client judged it: from `status` (a number
   * or numeric string; null means no answer), else a boolean `ok`, `success` or `acknowledged`, else a status word
   * (`succeeded`, `delivered`, `failed` …). False when the entry says nothing either way, so recovery replays it
   * (replaying a processed event is answered `duplicate`). See {@link DeliveryLogOptions} to read it otherwise.
   */
  acknowledged: boolean;
  [field: string]: unknown;
}

/**
 * How the client reads delivery log entries, for a service whose log differs from the defaults (the spec does not
 * show it, 4.2). Each field name is where that value is read from.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, deliveryLog: { seqField: 'sequence', acknowledged: (entry) => entry.outcome === 'accepted' } })
 * ```
 */
export interface DeliveryLogOptions {
  /** Default `event_id`. */
  eventIdField?: string;
  /** Default `seq`. */
  seqField?: string;
  /** Where the merchant host's HTTP status is read; default `status` (then `status_code`, `http_status`, `response_status`). */
  statusField?: string;
  /**
   * Judges an entry yourself: true acknowledged, false not, undefined to fall back to the client's own reading.
   * Called with the entry as the service sent it.
   */
  acknowledged?: (entry: Readonly<Record<string, unknown>>) => boolean | undefined;
}

/**
 * An event as the events call returns it: the full envelope of spec 2.3 (with its attestation on attested types).
 * Not verified by the client: run it through the receiver, which verifies it like any delivery. `seq` is read as a
 * number (a numeric string is accepted) and a `null` attestation is dropped (it means none); every other field is
 * kept as the service sent it.
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
  timestamp?: unknown;
  api_version?: unknown;
  data: Record<string, unknown>;
  attestation?: string;
  [field: string]: unknown;
}

/**
 * Where the next page of a list is, as the body said: a URL (`next`), a cursor (`next_cursor`, or the
 * `X-Next-Cursor` header of a bare list) or a seq (`next_after_seq`). The `Link` header is read by the client.
 */
export type NextPageHint = { url: string } | { cursor: string } | { afterSeq: number };

/** One page of a list call, as read from its body. */
export interface ListPage<T> {
  items: T[];
  /** The body's `has_more`; undefined when it did not say. */
  hasMore: boolean | undefined;
  /** Where the body says the next page is; undefined when it names none (or says `next: null`). */
  next: NextPageHint | undefined;
  /** The entries of the whole list, as the body's `total` (or `total_count`) says; undefined when it did not. */
  total?: number | undefined;
  /** The pages of the whole list, as the body's `total_pages` says; undefined when it did not. */
  totalPages?: number | undefined;
}

/** Thrown by the readers; the client turns it into a KybApiError `invalid_response`. */
export class InvalidBody extends Error {}

/**
 * The error code of an error body, in the common shapes: `{error:{code}}`, `{code}`, `{error:"code"}` or
 * `{errors:[{code}, …]}` (the first entry), folded to lower case (`INSUFFICIENT_CREDIT` is `insufficient_credit`)
 * so one code reads the same whatever case the service writes it in. Only a value shaped like a code counts: a
 * service that puts a message in `error` may echo request data in it, which must not reach logs.
 *
 * @example
 * ```ts
 * readErrorCode('{"errors":[{"code":"INSUFFICIENT_CREDIT"}]}') // 'insufficient_credit'
 * ```
 */
export function readErrorCode(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(body)) return undefined;
  // `{error:"code"}` last: a message in `error` beside `errors:[{code}]` must not hide the code.
  const candidates = [...errorObjects(body).map((object) => object.code), body.error];
  // The first value shaped like a code: a message in `error` may echo request data, and is never read as one.
  const found = candidates.find(
    (candidate): candidate is string => typeof candidate === 'string' && ERROR_CODE.test(candidate),
  );
  return found?.toLowerCase();
}

/**
 * The objects of an error body a service puts its fields in, most specific first: `error` (`{error:{code, …}}`),
 * the body itself (`{code, …}`), and the first entry of `errors` (`{errors:[{code, …}]}`). The error code and a
 * 402's credit amounts are both read from these, so a new shape is added here once.
 *
 * @example
 * ```ts
 * errorObjects(JSON.parse('{"errors":[{"code":"insufficient_credit","required_cents":500}]}'))
 * // [{ errors: [...] }, { code: 'insufficient_credit', required_cents: 500 }]
 * ```
 */
export function errorObjects(body: unknown): Record<string, unknown>[] {
  if (!isObject(body)) return [];
  const errors = body.errors;
  return [body.error, body, Array.isArray(errors) ? errors[0] : undefined].filter(isObject);
}

const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/i;

/**
 * A list body: a bare JSON array, or an object holding the list under one of `names` (then `data`, `items`,
 * `results`), with the paging fields beside it. `headerCursor` is the `X-Next-Cursor` header, which a bare list can
 * only page by.
 */
export function readListPage(text: string, names: readonly string[], headerCursor: string | null): ListPage<unknown> {
  const body = parseJson(text);
  if (Array.isArray(body))
    return { items: body, hasMore: undefined, next: headerCursor ? { cursor: headerCursor } : undefined };
  if (!isObject(body)) throw new InvalidBody(`${names[0]}: expected a list or an object holding one`);
  const key = [...names, 'data', 'items', 'results'].find((name) => Array.isArray(body[name]));
  if (key === undefined) throw new InvalidBody(`${names[0]}: expected a list under "${names[0]}" or "data"`);
  const hasMore = body.has_more ?? body.hasMore;
  return {
    items: body[key] as unknown[],
    hasMore: typeof hasMore === 'boolean' ? hasMore : undefined,
    next: nextHint(body, headerCursor),
    total: countOf(body.total ?? body.total_count ?? body.totalCount),
    totalPages: countOf(body.total_pages ?? body.totalPages),
  };
}

/** A count the body gives (a whole number, or a string of one); undefined for anything else. */
function countOf(value: unknown): number | undefined {
  const count = integerOf(value);
  return count !== undefined && count >= 0 ? count : undefined;
}

function nextHint(body: Record<string, unknown>, headerCursor: string | null): NextPageHint | undefined {
  const url = body.next ?? body.next_url ?? body.next_page_url;
  if (typeof url === 'string' && url !== '') return { url };
  const cursor = body.next_cursor ?? body.nextCursor ?? body.next_page_token;
  if (typeof cursor === 'string' && cursor !== '') return { cursor };
  const afterSeq = integerOf(body.next_after_seq ?? body.nextAfterSeq);
  if (afterSeq !== undefined && afterSeq >= -1) return { afterSeq };
  return headerCursor ? { cursor: headerCursor } : undefined;
}

/** The entries of one page of the deliveries call, read per {@link DeliveryLogEntry}. */
export function readDeliveries(
  items: readonly unknown[],
  options: DeliveryLogOptions = {},
  offset = 0,
): DeliveryLogEntry[] {
  const eventIdField = options.eventIdField ?? 'event_id';
  const seqField = options.seqField ?? 'seq';
  return items.map((entry, index) => {
    const where = `deliveries[${offset + index}]`;
    if (!isObject(entry)) throw new InvalidBody(`${where} is ${typeName(entry)}, not an object`);
    const eventId = entry[eventIdField];
    if (typeof eventId !== 'string' || eventId === '') {
      throw new InvalidBody(
        `${where}.${eventIdField} is ${typeName(eventId)}, not the event's id: if the service names it otherwise, set deliveryLog.eventIdField`,
      );
    }
    const seq = integerOf(entry[seqField]);
    if (seq === undefined || seq < 0) {
      throw new InvalidBody(
        `${where}.${seqField} is ${typeName(entry[seqField])}, not the event's seq (an integer): if the service names it otherwise, set deliveryLog.seqField`,
      );
    }
    const acknowledged = options.acknowledged?.(entry) ?? readAcknowledged(entry, where, options.statusField);
    return { ...entry, event_id: eventId, seq, acknowledged };
  });
}

const STATUS_FIELDS = ['status', 'status_code', 'http_status', 'response_status'];
const ACKNOWLEDGED_WORDS = new Set([
  'succeeded',
  'success',
  'successful',
  'delivered',
  'acknowledged',
  'ok',
  'accepted',
]);
const UNACKNOWLEDGED_WORDS = new Set([
  'failed',
  'failure',
  'error',
  'pending',
  'scheduled',
  'retrying',
  'timeout',
  'timed_out',
  'rejected',
  'queued',
  'exhausted',
]);

/** Whether an entry shows a 2xx answer: see {@link DeliveryLogEntry.acknowledged}. */
function readAcknowledged(entry: Record<string, unknown>, where: string, statusField: string | undefined): boolean {
  const field = statusField ?? STATUS_FIELDS.find((name) => entry[name] !== undefined);
  const status = field === undefined ? undefined : entry[field];
  if (status === null) return false; // no HTTP answer (connection failed, timed out)
  const code = integerOf(status);
  if (code !== undefined && (code === 0 || (code >= 100 && code <= 599))) return code >= 200 && code < 300;
  if (typeof status === 'string' && ACKNOWLEDGED_WORDS.has(status.toLowerCase())) return true;
  if (typeof status === 'string' && UNACKNOWLEDGED_WORDS.has(status.toLowerCase())) return false;
  for (const name of ['ok', 'success', 'acknowledged'])
    if (typeof entry[name] === 'boolean') return entry[name] as boolean;
  if (status === undefined) return false;
  throw new InvalidBody(
    `${where}.${field} is ${typeName(status)}, neither an HTTP status nor a known outcome word: ` +
      'say how to judge it with deliveryLog.acknowledged (or deliveryLog.statusField)',
  );
}

/** The entries of one page of the events call, read per {@link StreamEvent}. */
export function readEvents(items: readonly unknown[], offset = 0): StreamEvent[] {
  return items.map((entry, index) => {
    const where = `events[${offset + index}]`;
    if (!isObject(entry)) throw new InvalidBody(`${where} is ${typeName(entry)}, not an object`);
    for (const field of ['event', 'event_id', 'stream_id']) {
      if (typeof entry[field] !== 'string')
        throw new InvalidBody(`${where}.${field} is ${typeName(entry[field])}, not a string`);
    }
    const seq = integerOf(entry.seq);
    if (seq === undefined || seq < 0)
      throw new InvalidBody(`${where}.seq is ${typeName(entry.seq)}, not the event's seq (an integer)`);
    if (!isObject(entry.data)) throw new InvalidBody(`${where}.data is ${typeName(entry.data)}, not an object`);
    const event: Record<string, unknown> = { ...entry, seq };
    // null and absent both say "no attestation"; the receiver then refuses an attested type without one, as it should.
    if (event.attestation === null) delete event.attestation;
    else if (event.attestation !== undefined && typeof event.attestation !== 'string') {
      throw new InvalidBody(`${where}.attestation is ${typeName(event.attestation)}, not a JWT`);
    }
    return event as StreamEvent;
  });
}

/**
 * An integer from a number or from a string of one in plain decimal (`"3"`, `"-1"`): the unambiguous forms. Anything
 * else (`"3.0"`, `"03"`, `"1e3"`, `3.5`, `""`) is undefined, so the caller names the field instead of guessing.
 */
export function integerOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^(?:0|-?[1-9]\d{0,14})$/.test(value)) return Number(value);
  return undefined;
}

/** A value's kind for an error message, never the value itself (it may be anything the service sent). */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number')
    return Number.isInteger(value) ? (value < 0 ? 'a negative number' : 'a number') : 'a fractional number';
  return `a ${typeof value}`;
}

/**
 * The release token: `{ "attestation": "<jwt>" }` (also `token` or `jwt`) as JSON, or the bare JWT as the body
 * (application/jwt or text, optionally a JSON string).
 */
export function readReleaseToken(text: string, contentType: string): string {
  const trimmed = text.trim();
  const body =
    /json/i.test(contentType) || trimmed.startsWith('{') || trimmed.startsWith('"') ? parseJson(trimmed) : trimmed;
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
    const base64 = payload
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(payload.length / 4) * 4, '=');
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
