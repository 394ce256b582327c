import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './http.js';
import {
  integerOf,
  InvalidBody,
  readDeliveries,
  readErrorCode,
  readEvents,
  readListPage,
  readReleaseToken,
} from './parse.js';

// The spec shows none of these bodies (4.2, 7), so the client reads every plausible shape; these cases pin them.
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzZXEiOjF9.c2ln';

describe('error codes', () => {
  it.each([
    ['{"error":{"code":"insufficient_credit","message":"top up"}}', 'insufficient_credit'],
    ['{"code":"not_released"}', 'not_released'],
    ['{"error":"payload_expired"}', 'payload_expired'],
    ['{"error":{"message":"no code"}}', undefined],
    ['{"error":{"message":"m"},"code":"rate_limited"}', 'rate_limited'],
    // A sentence where the code belongs may echo request data: it is not a code, so it is not copied.
    ['{"error":"Request for jane@example.com is invalid"}', undefined],
    // Codes are folded to lower case, so a service writing them upper-case still names the typed error.
    ['{"code":"Not_Found"}', 'not_found'],
    ['{"error":{"code":"INSUFFICIENT_CREDIT"}}', 'insufficient_credit'],
    ['{"error":"PAYLOAD_EXPIRED"}', 'payload_expired'],
    // A list of errors (JSON:API and others): the first entry's code.
    ['{"errors":[{"code":"INSUFFICIENT_CREDIT","detail":"x"},{"code":"rate_limited"}]}', 'insufficient_credit'],
    ['{"errors":[{"message":"no code"},{"code":"rate_limited"}]}', undefined],
    ['{"errors":[]}', undefined],
    ['{"errors":["not_released"]}', undefined],
    // A message where `error` is does not hide a code given beside it.
    ['{"error":"Something went wrong for jane@example.com","errors":[{"code":"not_released"}]}', 'not_released'],
    // A generic code-shaped `error` gives way to the entry's code, as the 402's amounts are read from the entry.
    ['{"error":"bad_request","errors":[{"code":"insufficient_credit"}]}', 'insufficient_credit'],
    ['{"code":"Not Found"}', undefined],
    [JSON.stringify({ code: 'x'.repeat(65) }), undefined],
    [JSON.stringify({ code: 'x'.repeat(64) }), 'x'.repeat(64)],
    ['<html>bad gateway</html>', undefined],
    ['', undefined],
  ])('%s → %s', (body, code) => {
    expect(readErrorCode(body)).toBe(code);
  });
});

describe('release token', () => {
  it.each([
    ['{"attestation":"' + JWT + '"}', 'application/json'],
    ['{"token":"' + JWT + '"}', 'application/json; charset=utf-8'],
    [JWT, 'application/jwt'],
    [`${JWT}\n`, 'text/plain'],
    [`"${JWT}"`, 'application/json'],
  ])('reads %s (%s)', (body, contentType) => {
    expect(readReleaseToken(body, contentType)).toBe(JWT);
  });

  it.each([['{"attestation":42}'], ['{}'], ['not a jwt'], ['{"attestation":"a.b"}']])('refuses %s', (body) => {
    expect(() => readReleaseToken(body, 'application/json')).toThrow(InvalidBody);
  });
});

describe('events page', () => {
  const event = { event: 'kyb.x', event_id: '01J0000000000000000000000A', stream_id: 'dr_1', seq: 3, data: {} };
  const read = (body: unknown, cursor: string | null = null) => {
    const page = readListPage(JSON.stringify(body), ['events'], cursor);
    return { ...page, items: readEvents(page.items) };
  };

  it('keeps unknown fields of the page entries, whatever their type', () => {
    const page = read({
      events: [{ ...event, future_field: { a: 1 }, timestamp: null, api_version: 20260101 }],
      has_more: false,
    });
    expect(page).toEqual({
      items: [{ ...event, future_field: { a: 1 }, timestamp: null, api_version: 20260101 }],
      hasMore: false,
      next: undefined,
    });
  });

  it('reads a bare list, has_more unknown, and its X-Next-Cursor', () => {
    expect(read([event])).toEqual({ items: [event], hasMore: undefined, next: undefined });
    expect(read([event], 'c2')).toMatchObject({ next: { cursor: 'c2' } });
  });

  it.each([
    [{ data: [event], has_more: true, next_cursor: 'abc' }, { cursor: 'abc' }],
    [{ events: [event], has_more: true, next_after_seq: 3 }, { afterSeq: 3 }],
    [{ events: [event], has_more: true, next_after_seq: '3' }, { afterSeq: 3 }],
    [{ items: [event], next: '/x?page=2' }, { url: '/x?page=2' }],
    [{ results: [event], next: null }, undefined],
  ])('reads the next page of %j', (body, next) => {
    expect(read(body).next).toEqual(next);
  });

  it('reads a seq given as a numeric string as the number, and drops a null attestation (none)', () => {
    expect(read({ events: [{ ...event, seq: '3', attestation: null }] }).items).toEqual([event]);
  });

  it.each([
    ['seq not an integer', { ...event, seq: 1.5 }, 'events[0].seq is a fractional number'],
    ['seq an ambiguous string', { ...event, seq: '3.0' }, 'events[0].seq is a string'],
    ['no event_id', { ...event, event_id: undefined }, 'events[0].event_id is missing'],
    ['data not an object', { ...event, data: [] }, 'events[0].data is an array'],
    ['attestation not a string', { ...event, attestation: 1 }, 'events[0].attestation is a number'],
  ])('refuses an event with %s, naming the field and the type', (_what, bad, message) => {
    expect(() => read({ events: [bad] })).toThrow(message);
  });
});

describe('deliveries', () => {
  const read = (entries: unknown[], options?: Parameters<typeof readDeliveries>[1]) => readDeliveries(entries, options);

  it('keeps unknown fields, whatever their value, and judges acknowledgement', () => {
    const entry = { event_id: 'e', seq: 0, attempt: 1, status: null, error: 'timeout', region: 'eu' };
    expect(read([entry])).toEqual([{ ...entry, acknowledged: false }]);
  });

  // The shapes an independent implementation of the service was seen to send (issue 26).
  it.each([
    ['"error": null on an answered attempt', { event_id: 'e', seq: 2, attempt: 1, status: 200, error: null }, true],
    ['"attempt": null (a synthetic record)', { event_id: 'e', seq: 2, attempt: null, status: 500 }, false],
    ['an ISO attempted_at', { event_id: 'e', seq: 2, attempted_at: '2026-11-27T10:00:00Z', status: 204 }, true],
    ['"attempt": "1" and "status": "200"', { event_id: 'e', seq: 2, attempt: '1', status: '200' }, true],
    ['"seq": "2"', { event_id: 'e', seq: '2', status: 502 }, false],
    ['ok: true and no status', { event_id: 'e', seq: 2, ok: true }, true],
    ['success: false and no status', { event_id: 'e', seq: 2, success: false }, false],
    ['a status word', { event_id: 'e', seq: 2, status: 'Delivered' }, true],
    ['a failure word', { event_id: 'e', seq: 2, status: 'failed', http_status: 503 }, false],
    ['status_code instead of status', { event_id: 'e', seq: 2, status_code: 201 }, true],
    ['nothing about the outcome', { event_id: 'e', seq: 2 }, false],
  ])('reads an entry with %s', (_what, entry, acknowledged) => {
    const [read0] = read([entry]);
    expect(read0).toMatchObject({ event_id: 'e', seq: 2, acknowledged });
    for (const [field, value] of Object.entries(entry)) if (field !== 'seq') expect(read0![field]).toEqual(value);
  });

  it.each([
    ['no seq', { event_id: 'e' }, 'deliveries[0].seq is missing', 'deliveryLog.seqField'],
    ['a null seq', { event_id: 'e', seq: null }, 'deliveries[0].seq is null', 'deliveryLog.seqField'],
    [
      'a fractional seq',
      { event_id: 'e', seq: 1.5 },
      'deliveries[0].seq is a fractional number',
      'deliveryLog.seqField',
    ],
    ['a numeric event_id', { event_id: 7, seq: 1 }, 'deliveries[0].event_id is a number', 'deliveryLog.eventIdField'],
    [
      'an unknown status word',
      { event_id: 'e', seq: 1, status: 'maybe' },
      'deliveries[0].status is a string',
      'deliveryLog.acknowledged',
    ],
    [
      'a status out of range',
      { event_id: 'e', seq: 1, status: 1200 },
      'deliveries[0].status is a number',
      'deliveryLog.acknowledged',
    ],
  ])('refuses an entry with %s, naming the field, its type and the option', (_what, bad, field, option) => {
    expect(() => read([bad])).toThrow(InvalidBody);
    expect(() => read([bad])).toThrow(field);
    expect(() => read([bad])).toThrow(option);
  });

  it('never quotes the value it refuses', () => {
    expect(() => read([{ event_id: 'e', seq: 1, status: 'jane@example.com' }])).toThrow(/^(?!.*jane)/);
  });

  it('reads the fields the options name, and an acknowledged hook wins', () => {
    const entry = { id: 'e', sequence: '4', outcome: 'accepted', http: 500 };
    const options = {
      eventIdField: 'id',
      seqField: 'sequence',
      statusField: 'http',
      acknowledged: (e: Readonly<Record<string, unknown>>) => (e.outcome === 'accepted' ? true : undefined),
    };
    expect(read([entry], options)).toEqual([{ ...entry, event_id: 'e', seq: 4, acknowledged: true }]);
    expect(read([{ ...entry, outcome: 'other' }], options)[0]).toMatchObject({ acknowledged: false });
  });
});

describe('integers', () => {
  it.each([
    [3, 3],
    ['3', 3],
    ['-1', -1],
    ['0', 0],
    ['03', undefined],
    ['3.0', undefined],
    ['1e3', undefined],
    [' 3', undefined],
    [3.5, undefined],
    ['', undefined],
    [null, undefined],
  ])('%j → %j', (value, expected) => {
    expect(integerOf(value)).toBe(expected);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['2', 2000],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    [null, undefined],
  ])('%s → %s ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
