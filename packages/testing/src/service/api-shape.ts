/*
 * The shapes of the local service's list answers. The spec does not show the bodies of the deliveries and events
 * calls (4.2), so a real service may page and spell them in any common way; the local service can answer in each, so
 * that the client, ordering and recovery suites run over every shape and not only over the one they were written
 * against.
 */

/**
 * How the local service shapes its list answers (deliveries, events).
 *
 * @example
 * ```ts
 * const service = await startKybService({ apiShape: { paging: 'link', deliveriesPageSize: 3, deliveriesOrder: 'newest_first' } })
 * ```
 */
export interface ApiShape {
  /**
   * How a list says where its next page is:
   * - `'has_more'` (default): `{ events | deliveries, has_more }`; the caller asks for the events after the last seq
   *   (deliveries then come on one page);
   * - `'next_cursor'`: `{ data, has_more, next_cursor }`, the cursor sent back as `?cursor=`;
   * - `'next_after_seq'`: events `{ events, has_more, next_after_seq }` (deliveries as `'next_cursor'`);
   * - `'next_url'`: `{ events | deliveries, next }`, an absolute URL or null;
   * - `'link'`: `{ events | deliveries }` and a `Link: <…>; rel="next"` header;
   * - `'bare_cursor'`: a bare JSON array and an `X-Next-Cursor` header.
   */
  paging?: 'has_more' | 'next_cursor' | 'next_after_seq' | 'next_url' | 'link' | 'bare_cursor';
  /** Entries per page of the deliveries list; default all on one page. */
  deliveriesPageSize?: number;
  /** Order of the deliveries list; default oldest first. */
  deliveriesOrder?: 'oldest_first' | 'newest_first';
  /**
   * Fields that are absent by default are sent as `null` (`"error": null`, `"response_code": null`, an unattested
   * event's `"attestation": null`), and each event not attempted yet gets a synthetic log record with
   * `"attempt": null` and `"status": null`.
   */
  nullFields?: boolean;
  /** Numbers as strings: `"seq": "3"`, `"attempt": "1"`, `"status": "200"`, `"duration_ms": "12"`. */
  stringNumbers?: boolean;
  /** `attempted_at` as an ISO 8601 string instead of Unix seconds. */
  isoTimes?: boolean;
  /** The events call serves a purged request's released events without their attestation (values purged). */
  purgedEventsWithoutAttestation?: boolean;
}

/**
 * Named shapes that, together, cover every form of {@link ApiShape}: the suites run over each.
 *
 * @example
 * ```ts
 * describe.each(Object.entries(API_SHAPE_VARIANTS))('over %s', (_name, apiShape) => { ... })
 * ```
 */
export const API_SHAPE_VARIANTS: Readonly<Record<string, ApiShape>> = {
  'has_more (default)': {},
  'next_cursor, 2 a page, newest first': {
    paging: 'next_cursor',
    deliveriesPageSize: 2,
    deliveriesOrder: 'newest_first',
  },
  'next_after_seq, null fields': { paging: 'next_after_seq', deliveriesPageSize: 3, nullFields: true },
  'next URL, string numbers': { paging: 'next_url', deliveriesPageSize: 2, stringNumbers: true },
  'Link header, 3 a page, newest first, ISO times': {
    paging: 'link',
    deliveriesPageSize: 3,
    deliveriesOrder: 'newest_first',
    isoTimes: true,
  },
  'bare list + X-Next-Cursor, everything at once': {
    paging: 'bare_cursor',
    deliveriesPageSize: 1,
    deliveriesOrder: 'newest_first',
    nullFields: true,
    stringNumbers: true,
    isoTimes: true,
  },
};

/** One page of a list as the HTTP layer sends it. */
export interface ShapedPage {
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * A page of `items` (already filtered, e.g. by after_seq) in `shape`: the offset comes from the request's `cursor`,
 * the next page is named the shape's way. `url` is the request's own URL, on the service's origin.
 */
export function shapePage(
  shape: ApiShape,
  list: 'events' | 'deliveries',
  items: readonly unknown[],
  url: URL,
  pageSize: number,
): ShapedPage | { status: 400; message: string } {
  const paging = shape.paging ?? 'has_more';
  const cursor = url.searchParams.get('cursor');
  const offset = cursor === null ? 0 : decodeCursor(cursor);
  if (offset === undefined) return { status: 400, message: 'cursor is not one this service gave.' };
  // Deliveries in the default shape come on one page: its has_more names no next page a caller could ask for.
  const size = list === 'deliveries' && paging === 'has_more' ? items.length : pageSize;
  const page = items.slice(offset, offset + Math.max(size, 1));
  const more = offset + page.length < items.length;
  const nextCursor = encodeCursor(offset + page.length);
  const nextUrl = new URL(url);
  nextUrl.searchParams.set('cursor', nextCursor);
  switch (paging) {
    case 'has_more':
      return { body: { [list]: page, has_more: more } };
    case 'next_cursor':
      return { body: { data: page, has_more: more, ...(more ? { next_cursor: nextCursor } : {}) } };
    case 'next_after_seq':
      if (list === 'events') {
        const last = page.at(-1) as { seq?: unknown } | undefined;
        return {
          body: { events: page, has_more: more, ...(more && last ? { next_after_seq: Number(last.seq) } : {}) },
        };
      }
      return { body: { deliveries: page, has_more: more, ...(more ? { next_cursor: nextCursor } : {}) } };
    case 'next_url':
      return { body: { [list]: page, next: more ? nextUrl.href : null } };
    case 'link':
      return {
        body: { [list]: page },
        ...(more ? { headers: { link: `<${nextUrl.pathname}${nextUrl.search}>; rel="next"` } } : {}),
      };
    case 'bare_cursor':
      return { body: page, ...(more ? { headers: { 'x-next-cursor': nextCursor } } : {}) };
  }
}

/** A delivery log record in `shape`: numbers as strings, ISO times, nulls, as the shape says. */
export function shapeDelivery(shape: ApiShape, record: Record<string, unknown>): Record<string, unknown> {
  const shaped: Record<string, unknown> = { ...record };
  if (shape.nullFields) {
    shaped.error ??= null;
    shaped.response_code ??= null;
  }
  if (shape.isoTimes && typeof shaped.attempted_at === 'number')
    shaped.attempted_at = new Date(shaped.attempted_at * 1000).toISOString();
  if (shape.stringNumbers) {
    for (const field of ['seq', 'attempt', 'status', 'duration_ms'])
      if (typeof shaped[field] === 'number') shaped[field] = String(shaped[field]);
  }
  return shaped;
}

/** An event of the events call in `shape`. */
export function shapeEvent(shape: ApiShape, event: Record<string, unknown>, purged: boolean): Record<string, unknown> {
  const shaped: Record<string, unknown> = { ...event };
  if (purged && shape.purgedEventsWithoutAttestation) delete shaped.attestation;
  if (shape.nullFields) shaped.attestation ??= null;
  if (shape.stringNumbers && typeof shaped.seq === 'number') shaped.seq = String(shaped.seq);
  return shaped;
}

function encodeCursor(offset: number): string {
  return `o${offset.toString(36)}`;
}

function decodeCursor(cursor: string): number | undefined {
  return /^o[0-9a-z]{1,8}$/.test(cursor) ? parseInt(cursor.slice(1), 36) : undefined;
}
