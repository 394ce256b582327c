import { describe, expect, it } from 'vitest';
import { linkNext, nextPageUrl, PageTracker, PagingError } from './paging.js';

// How a list call finds its next page, and where it stops: the forms a service can page by, and the errors a user
// sees (through the client's invalid_response and too_many_pages) when it cannot go on.
describe('linkNext', () => {
  it.each([
    ['<https://api.test/p2>; rel="next"', 'https://api.test/p2'],
    ['<https://api.test/p1>; rel="prev", <https://api.test/p3>; rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p1>; rel="prev",<https://api.test/p3>; rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p1>; rel="prev",   <https://api.test/p3>; rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p1>; title="first", <https://api.test/p3>; rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p3>;rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p3>; rel = "next"', 'https://api.test/p3'],
    ['<https://api.test/p3>; rel=next', 'https://api.test/p3'],
    ['<https://api.test/p3>; REL=Next; title="x"', 'https://api.test/p3'],
    ['<https://api.test/p3>; rel="last next"', 'https://api.test/p3'],
    ['<https://api.test/p3?a=1,2>; rel="next"', 'https://api.test/p3?a=1,2'],
    ['junk, <https://api.test/p3>; rel="next"', 'https://api.test/p3'],
    ['<https://api.test/p1>; rel="prev"', undefined],
    ['<https://api.test/p1>; rel=nextpage', undefined],
    ['<https://api.test/p1>; rel="prev"; next', undefined],
    ['https://api.test/p3; rel="next"', undefined],
    ['junk <https://api.test/p3>; rel="next"', undefined],
    ['', undefined],
    [null, undefined],
  ])('%s → %s', (header, next) => {
    expect(linkNext(header)).toBe(next);
  });
});

describe('nextPageUrl', () => {
  const current = new URL('https://api.test/v1/x/events?after_seq=-1&limit=2');
  const page = (fields: Partial<Parameters<typeof nextPageUrl>[1]>) => ({
    items: [1, 2],
    hasMore: undefined,
    next: undefined,
    ...fields,
  });

  it('asks for the events after the seq the body names', () => {
    expect(
      nextPageUrl(current, page({ hasMore: true, next: { afterSeq: 5 } }), undefined, 'cursor', undefined)?.href,
    ).toBe('https://api.test/v1/x/events?after_seq=5&limit=2');
  });

  it('sends a cursor back in the parameter named', () => {
    expect(nextPageUrl(current, page({ next: { cursor: 'c 2' } }), undefined, 'starting_after', undefined)?.href).toBe(
      'https://api.test/v1/x/events?after_seq=-1&limit=2&starting_after=c+2',
    );
  });

  it('refuses an empty page that says more follow, and one that says so naming no next page', () => {
    expect(() => nextPageUrl(current, page({ items: [], hasMore: true }), undefined, 'cursor', undefined)).toThrow(
      new PagingError('invalid_response', 'an empty page that says has_more, with no next page'),
    );
    expect(() => nextPageUrl(current, page({ hasMore: true }), undefined, 'cursor', undefined)).toThrow(
      'a page says has_more but names no next page (next, next_cursor, next_after_seq, a Link or X-Next-Cursor header)',
    );
    expect(
      nextPageUrl(current, page({ items: [] }), undefined, 'cursor', new URL('https://api.test/y')),
    ).toBeUndefined();
  });
});

describe('nextPageUrl against the totals a page gives', () => {
  const current = new URL('https://api.test/v1/x/deliveries');
  const page = (fields: Partial<Parameters<typeof nextPageUrl>[1]>) => ({
    items: [1, 2],
    hasMore: undefined,
    next: undefined,
    ...fields,
  });
  const named = 'but names no next page (next, next_cursor, next_after_seq, a Link or X-Next-Cursor header)';

  it('refuses a page whose total or total_pages is above what was read, naming the field and the counts', () => {
    const read = { entries: 2, pages: 1 };
    expect(() => nextPageUrl(current, page({ total: 3 }), undefined, 'cursor', undefined, read)).toThrow(
      new PagingError('invalid_response', `a page says total 3 (2 entries read) ${named}`),
    );
    expect(() => nextPageUrl(current, page({ totalPages: 2 }), undefined, 'cursor', undefined, read)).toThrow(
      `a page says total_pages 2 (1 pages read) ${named}`,
    );
    expect(() => nextPageUrl(current, page({ items: [], total: 3 }), undefined, 'cursor', undefined, read)).toThrow(
      'an empty page that says total 3 (2 entries read), with no next page',
    );
  });

  it('ends the list when the totals are read, or when no count of what was read is given (events)', () => {
    const read = { entries: 2, pages: 2 };
    expect(
      nextPageUrl(current, page({ total: 2, totalPages: 2 }), undefined, 'cursor', undefined, read),
    ).toBeUndefined();
    expect(nextPageUrl(current, page({ total: 9, totalPages: 9 }), undefined, 'cursor', undefined)).toBeUndefined();
    expect(
      nextPageUrl(current, page({ total: 9, hasMore: false }), undefined, 'cursor', undefined, read),
    ).toBeUndefined();
  });

  it('follows a next page the body names, whatever the totals say', () => {
    const read = { entries: 2, pages: 1 };
    expect(
      nextPageUrl(current, page({ total: 9, next: { cursor: 'c2' } }), undefined, 'cursor', undefined, read)?.href,
    ).toBe('https://api.test/v1/x/deliveries?cursor=c2');
  });
});

describe('PageTracker', () => {
  it('fails past maxPages saying what to change, and at a page already read', () => {
    const tracker = new PageTracker(2, 'the deliveries list');
    tracker.visit(new URL('https://api.test/a'));
    expect(() => tracker.visit(new URL('https://api.test/a'))).toThrow(
      'the next page points back at a page already read',
    );
    tracker.visit(new URL('https://api.test/b'));
    let error: unknown;
    try {
      tracker.visit(new URL('https://api.test/c'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PagingError);
    expect(error).toMatchObject({
      code: 'too_many_pages',
      message:
        'the deliveries list has more than 2 pages (paging.maxPages): the call fails rather than end with part of it. ' +
        'Raise paging.maxPages, or ask for larger pages with pageSize.',
    });
  });
});
