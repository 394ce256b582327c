/*
 * Following a list call from page to page. The spec does not show how the KYB API pages (4.2), so the client follows
 * every common form: `has_more` with `next_cursor`, `next_after_seq` or `next`; a `Link: <…>; rel="next"` header;
 * a bare list with `X-Next-Cursor`. A next page is only ever asked of the API's own origin (it gets the API key), and
 * a log is never silently cut short: past `maxPages`, or at a page that says more follow (`has_more`, `total`,
 * `total_pages`) without saying where, the call fails.
 */
import type { ListPage } from './parse.js';

/**
 * How list calls (`deliveries`, `events`) page through the API. The spec does not show it, so every common form is
 * followed; these options bound it and name the query parameter a cursor goes in.
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, paging: { maxPages: 5_000, cursorParam: 'starting_after' } })
 * ```
 */
export interface PagingOptions {
  /**
   * The most pages one call reads; default {@link DEFAULT_MAX_PAGES}. Past it the call fails with `too_many_pages`
   * rather than return part of the list.
   */
  maxPages?: number;
  /** The query parameter a `next_cursor` (or `X-Next-Cursor`) is sent back in; default `cursor`. */
  cursorParam?: string;
}

/**
 * The default of {@link PagingOptions.maxPages}: 1,000 pages (100,000 entries at the usual 100 a page).
 *
 * @example
 * ```ts
 * createKybClient({ baseUrl, apiKey, paging: { maxPages: 10 * DEFAULT_MAX_PAGES } })
 * ```
 */
export const DEFAULT_MAX_PAGES = 1000;

/** Why a next page cannot be followed; the client turns it into a KybApiError. */
export class PagingError extends Error {
  constructor(
    readonly code: 'invalid_response' | 'too_many_pages',
    message: string,
  ) {
    super(message);
  }
}

/** The `rel="next"` target of a Link header (RFC 8288), or undefined. */
export function linkNext(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const link of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(link);
    if (!match) continue;
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2]!);
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (relations.includes('next')) return match[1];
  }
  return undefined;
}

/**
 * What a call that reads its list from the start (deliveries) has read so far: held against the totals a page gives.
 * The events call starts after a seq, so a total of the whole stream says nothing about what it still has to read.
 */
export interface ReadSoFar {
  entries: number;
  pages: number;
}

/**
 * The URL of the page after `current`, or undefined when the list ended. `fallback` is where a page that says more
 * follow (or does not say) goes when it names no next page: the events call asks for the events after the last
 * seq it got; the deliveries call has none, and a page that says more follow (`has_more`, or a `total` or
 * `total_pages` above what `read` counts) is then an error rather than the end of the list.
 */
export function nextPageUrl(
  current: URL,
  page: ListPage<unknown>,
  link: string | undefined,
  cursorParam: string,
  fallback: URL | undefined,
  read?: ReadSoFar,
): URL | undefined {
  if (page.hasMore === false) return undefined;
  if (link !== undefined) return sameOrigin(new URL(link, current), current);
  const next = page.next;
  if (next && 'url' in next) return sameOrigin(new URL(next.url, current), current);
  if (next && 'cursor' in next) return withParam(current, cursorParam, next.cursor);
  if (next && 'afterSeq' in next) return withParam(current, 'after_seq', String(next.afterSeq));
  if (page.items.length > 0 && fallback) return fallback;
  const more = moreSaid(page, read);
  if (more === undefined) return undefined;
  throw new PagingError(
    'invalid_response',
    page.items.length === 0
      ? `an empty page that says ${more}, with no next page`
      : `a page says ${more} but names no next page (next, next_cursor, next_after_seq, a Link or X-Next-Cursor header)`,
  );
}

/**
 * Which fields of a page say more entries follow, or undefined. Pages are counted as read rather than taken from the
 * body's `page`, which may count from 0 or from 1. Only numbers are quoted: the message reaches logs.
 */
function moreSaid(page: ListPage<unknown>, read: ReadSoFar | undefined): string | undefined {
  if (page.hasMore === true) return 'has_more';
  if (read === undefined) return undefined;
  if (page.total !== undefined && page.total > read.entries)
    return `total ${page.total} (${read.entries} entries read)`;
  if (page.totalPages !== undefined && page.totalPages > read.pages)
    return `total_pages ${page.totalPages} (${read.pages} pages read)`;
  return undefined;
}

/** A copy of `url` with `name` set to `value`. */
export function withParam(url: URL, name: string, value: string): URL {
  const next = new URL(url);
  next.searchParams.set(name, value);
  return next;
}

function sameOrigin(next: URL, current: URL): URL {
  // The next page gets the API key: a service (or anyone who can change its answers) must not send it elsewhere.
  if (next.origin !== current.origin)
    throw new PagingError('invalid_response', "the next page is on another origin than the API's; it was not followed");
  return next;
}

/**
 * Tracks the pages of one call: the bound, and a next page that points back at one already read (which would page
 * forever).
 */
export class PageTracker {
  readonly #seen = new Set<string>();
  constructor(
    readonly maxPages: number,
    readonly what: string,
  ) {}

  visit(url: URL): void {
    if (this.#seen.has(url.href))
      throw new PagingError('invalid_response', 'the next page points back at a page already read');
    if (this.#seen.size >= this.maxPages) {
      throw new PagingError(
        'too_many_pages',
        `${this.what} has more than ${this.maxPages} pages (paging.maxPages): the call fails rather than end with part of it. ` +
          'Raise paging.maxPages, or ask for larger pages with pageSize.',
      );
    }
    this.#seen.add(url.href);
  }
}
