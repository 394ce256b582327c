import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './http.js';
import { InvalidBody, readDeliveries, readErrorCode, readEventsPage, readReleaseToken } from './parse.js';

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
    ['{"code":"Not_Found"}', undefined],
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

  it('keeps unknown fields of the page entries', () => {
    const page = readEventsPage(JSON.stringify({ events: [{ ...event, future_field: { a: 1 } }], has_more: false }));
    expect(page).toEqual({ events: [{ ...event, future_field: { a: 1 } }], hasMore: false });
  });

  it('reads a bare list, has_more unknown', () => {
    expect(readEventsPage(JSON.stringify([event]))).toEqual({ events: [event], hasMore: undefined });
  });

  it.each([
    ['seq not an integer', { ...event, seq: 1.5 }],
    ['no event_id', { ...event, event_id: undefined }],
    ['data not an object', { ...event, data: [] }],
    ['attestation not a string', { ...event, attestation: 1 }],
  ])('refuses an event with %s', (_what, bad) => {
    expect(() => readEventsPage(JSON.stringify({ events: [bad] }))).toThrow(InvalidBody);
  });
});

describe('deliveries', () => {
  it('keeps unknown fields and accepts a null status (connection failed)', () => {
    const entry = { event_id: 'e', seq: 0, attempt: 1, status: null, error: 'timeout', region: 'eu' };
    expect(readDeliveries(JSON.stringify({ deliveries: [entry] }))).toEqual([entry]);
  });

  it.each([
    ['status as text', { event_id: 'e', seq: 0, status: '500' }],
    ['no seq', { event_id: 'e' }],
  ])('refuses an entry with %s', (_what, bad) => {
    expect(() => readDeliveries(JSON.stringify({ deliveries: [bad] }))).toThrow(InvalidBody);
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
