import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  decodeClaims,
  integerOf,
  InvalidBody,
  parseJson,
  readDeliveries,
  readErrorCode,
  readEvents,
  readListPage,
  readReleaseToken,
  typeName,
} from './parse.js';

// The edges of the lenient readers: what each accepts, and the message a refused body gets (the client puts it in
// the invalid_response error a user sees).
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzZXEiOjF9.c2ln';
const event = { event: 'kyb.x', event_id: '01J0000000000000000000000A', stream_id: 'dr_1', seq: 3, data: {} };

describe('readErrorCode', () => {
  it.each([['null'], ['5'], ['"rate_limited"'], ['["rate_limited"]'], ['{"code":5}'], ['not json']])(
    'finds no code in %s',
    (text) => {
      expect(readErrorCode(text)).toBeUndefined();
    },
  );
});

describe('readListPage', () => {
  it.each([
    ['5', 'events: expected a list or an object holding one'],
    ['"events"', 'events: expected a list or an object holding one'],
    ['null', 'events: expected a list or an object holding one'],
    ['{"events":{"0":{}},"has_more":false}', 'events: expected a list under "events" or "data"'],
    ['{}', 'events: expected a list under "events" or "data"'],
    ['<html>', 'the body is not JSON'],
  ])('refuses %s: %s', (text, message) => {
    expect(() => readListPage(text, ['events'], null)).toThrow(new InvalidBody(message));
  });

  it('reads has_more only when it is a boolean, and hasMore when has_more is absent', () => {
    expect(readListPage('{"events":[],"has_more":"true"}', ['events'], null).hasMore).toBeUndefined();
    expect(readListPage('{"events":[],"has_more":1}', ['events'], null).hasMore).toBeUndefined();
    expect(readListPage('{"events":[],"hasMore":true}', ['events'], null).hasMore).toBe(true);
  });

  it.each([
    [{ next: '', next_cursor: 'c2' }, { cursor: 'c2' }],
    [{ next_url: '/p/2' }, { url: '/p/2' }],
    [{ next_page_url: '/p/3' }, { url: '/p/3' }],
    [{ next_cursor: '', next_after_seq: 7 }, { afterSeq: 7 }],
    [{ nextCursor: 'c3' }, { cursor: 'c3' }],
    [{ next_page_token: 'tok' }, { cursor: 'tok' }],
    [{ nextAfterSeq: 0 }, { afterSeq: 0 }],
    [{ next_after_seq: -1 }, { afterSeq: -1 }],
    [{ next_after_seq: -2 }, undefined],
    [{ next_after_seq: 1.5 }, undefined],
    [{ next: 5, next_cursor: 6 }, undefined],
  ])('reads the next page of %j as %j', (fields, next) => {
    expect(readListPage(JSON.stringify({ events: [event], ...fields }), ['events'], null).next).toEqual(next);
  });

  it.each([
    [{ total: 3, total_pages: 2 }, 3, 2],
    [{ total_count: '3', totalPages: '2' }, 3, 2],
    [{ totalCount: 0 }, 0, undefined],
    [{ total: -1, total_pages: 1.5 }, undefined, undefined],
    [{ total: '3.0', total_pages: null }, undefined, undefined],
  ])('reads the totals of %j as total %s, total_pages %s', (fields, total, totalPages) => {
    const page = readListPage(JSON.stringify({ events: [event], ...fields }), ['events'], null);
    expect([page.total, page.totalPages]).toEqual([total, totalPages]);
  });

  it('takes the X-Next-Cursor header when an object body names no next page, and the body when it does', () => {
    expect(readListPage(JSON.stringify({ events: [event] }), ['events'], 'h1').next).toEqual({ cursor: 'h1' });
    expect(readListPage(JSON.stringify({ events: [event], next_cursor: 'b1' }), ['events'], 'h1').next).toEqual({
      cursor: 'b1',
    });
    expect(readListPage(JSON.stringify({ events: [event] }), ['events'], '').next).toBeUndefined();
  });
});

describe('readDeliveries', () => {
  const entry = { event_id: 'e', seq: 2 };

  it('names the entry by its place in the whole log, past the pages already read', () => {
    expect(() => readDeliveries([entry, { ...entry, seq: 'x' }], {}, 100)).toThrow(
      "deliveries[101].seq is a string, not the event's seq (an integer)",
    );
  });

  it.each([
    [5, 'deliveries[0] is a number, not an object'],
    [null, 'deliveries[0] is null, not an object'],
    [[entry], 'deliveries[0] is an array, not an object'],
    [{ ...entry, event_id: '' }, "deliveries[0].event_id is a string, not the event's id"],
    [{ ...entry, event_id: 0 }, "deliveries[0].event_id is a number, not the event's id"],
    [{ ...entry, seq: -1 }, "deliveries[0].seq is a negative number, not the event's seq"],
    [{ ...entry, seq: '-1' }, "deliveries[0].seq is a string, not the event's seq"],
    [{ ...entry, seq: [2] }, "deliveries[0].seq is an array, not the event's seq"],
    [{ ...entry, status: 42 }, 'deliveries[0].status is a number, neither an HTTP status nor a known outcome word'],
    [{ ...entry, status: -200 }, 'deliveries[0].status is a negative number, neither an HTTP status'],
    [{ ...entry, status: true }, 'deliveries[0].status is a boolean, neither an HTTP status'],
  ])('refuses %j: %s', (bad, message) => {
    expect(() => readDeliveries([bad])).toThrow(InvalidBody);
    expect(() => readDeliveries([bad])).toThrow(message);
  });

  it.each([
    [{ status: 0 }, false],
    [{ status: '0' }, false],
    [{ status: 100, ok: true }, false],
    [{ status: 150 }, false],
    [{ status: 199 }, false],
    [{ status: 200 }, true],
    [{ status: 299 }, true],
    [{ status: 300 }, false],
    [{ status: 599, ok: true }, false],
    [{ status: 42, ok: true }, true],
    [{ status: 600, success: true }, true],
    [{ success: true }, true],
    [{ acknowledged: true }, true],
    [{ acknowledged: false, status: 'exotic' }, false],
    [{ ok: 'yes' }, false],
    [{ http_status: 204 }, true],
    [{ response_status: 204 }, true],
    [{ status_code: 500, http_status: 204 }, false],
    [{ undefined: 200, ok: false }, false],
  ])('judges %j acknowledged: %s', (fields, acknowledged) => {
    expect(readDeliveries([{ ...entry, ...fields }])[0]!.acknowledged).toBe(acknowledged);
  });

  it.each([
    ...['succeeded', 'success', 'successful', 'delivered', 'acknowledged', 'ok', 'accepted', 'OK'].map(
      (word) => [word, true] as const,
    ),
    ...[
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
      'FAILED',
    ].map((word) => [word, false] as const),
  ])('reads the status word %s as acknowledged: %s (an ok flag beside it does not count)', (word, acknowledged) => {
    expect(readDeliveries([{ ...entry, status: word, ok: !acknowledged }])[0]!.acknowledged).toBe(acknowledged);
  });
});

describe('readEvents', () => {
  it('names the event by its place in the whole stream, past the pages already read', () => {
    expect(() => readEvents([event, { ...event, seq: 'x' }], 40)).toThrow(
      "events[41].seq is a string, not the event's seq (an integer)",
    );
  });

  it.each([
    [7, 'events[0] is a number, not an object'],
    [null, 'events[0] is null, not an object'],
    [{ ...event, seq: -1 }, "events[0].seq is a negative number, not the event's seq (an integer)"],
    [{ ...event, stream_id: 5 }, 'events[0].stream_id is a number, not a string'],
    [{ ...event, event: null }, 'events[0].event is null, not a string'],
    [{ ...event, data: 'x' }, 'events[0].data is a string, not an object'],
  ])('refuses %j: %s', (bad, message) => {
    expect(() => readEvents([bad])).toThrow(new InvalidBody(message));
  });

  it('takes a seq of 0 and keeps a string attestation', () => {
    expect(readEvents([{ ...event, seq: 0, attestation: JWT }])).toEqual([{ ...event, seq: 0, attestation: JWT }]);
  });
});

describe('integerOf and typeName', () => {
  it.each([[[3]], [['3']], [{}], [true], ['abc'], ['-0'], ['1234567890123456']])('%j is no integer', (value) => {
    expect(integerOf(value)).toBeUndefined();
  });

  it.each([
    [0, 'a number'],
    [-1, 'a negative number'],
    [2.5, 'a fractional number'],
    [null, 'null'],
    [undefined, 'missing'],
    [[], 'an array'],
    ['x', 'a string'],
    [{}, 'a object'],
  ])('%j is %s', (value, name) => {
    expect(typeName(value)).toBe(name);
  });
});

describe('readReleaseToken', () => {
  it.each([
    [`{"attestation":"${JWT}"}`, 'text/plain'],
    [` {"jwt":"${JWT}"}`, 'application/octet-stream'],
    [`{"token":"${JWT}"}`, ''],
    [`{"attestation":"not a jwt","token":"${JWT}"}`, 'application/json'],
    [`{"attestation":5,"jwt":"${JWT}"}`, 'application/json'],
    [`"${JWT}"`, 'text/plain'],
  ])('reads %s (%s)', (text, contentType) => {
    expect(readReleaseToken(text, contentType)).toBe(JWT);
  });

  it.each([
    ['hello', 'text/plain', 'release: no attestation JWT in the body'],
    [`!${JWT}`, 'application/jwt', 'release: no attestation JWT in the body'],
    [`${JWT}!`, 'application/jwt', 'release: no attestation JWT in the body'],
    [`x y.${JWT}`, 'text/plain', 'release: no attestation JWT in the body'],
    ['null', 'application/json', 'release: no attestation JWT in the body'],
    ['[]', 'application/json', 'release: no attestation JWT in the body'],
    [`{"attestation":["${JWT}"]}`, 'application/json', 'release: no attestation JWT in the body'],
    ['"abc', 'text/plain', 'the body is not JSON'],
    ['{"attestation":', 'text/plain', 'the body is not JSON'],
    [`${JWT}"`, 'text/plain', 'release: no attestation JWT in the body'],
  ])('refuses %s (%s): %s', (text, contentType, message) => {
    expect(() => readReleaseToken(text, contentType)).toThrow(new InvalidBody(message));
  });
});

describe('decodeClaims', () => {
  const token = (payload: Buffer) => `eyJhbGciOiJSUzI1NiJ9.${payload.toString('base64url')}.c2ln`;

  it('decodes base64url claims, with - and _ and without padding', () => {
    const claims = { event_id: '01J0', note: '>>>???~~~', seq: 4 };
    const payload = Buffer.from(JSON.stringify(claims));
    expect(payload.toString('base64url')).toMatch(/-/);
    expect(payload.toString('base64url')).toMatch(/_/);
    expect(decodeClaims(token(payload))).toEqual(claims);
    for (const extra of ['', 'a', 'ab', 'abc']) {
      const padded = { ...claims, extra };
      expect(decodeClaims(token(Buffer.from(JSON.stringify(padded))))).toEqual(padded);
    }
  });

  it.each([
    [
      'not utf-8',
      token(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')])),
      'base64url JSON',
    ],
    ['not base64', 'a.!!!.c', 'base64url JSON'],
    ['not JSON', token(Buffer.from('claims')), 'base64url JSON'],
    ['no payload', 'abc', 'base64url JSON'],
    ['an array', token(Buffer.from('[1]')), 'a JSON object'],
    ['null', token(Buffer.from('null')), 'a JSON object'],
  ])('refuses claims that are %s', (_what, jwt, message) => {
    expect(() => decodeClaims(jwt)).toThrow(InvalidBody);
    expect(() => decodeClaims(jwt)).toThrow(`release: the attestation claims are not ${message}`);
  });
});

describe('parseJson', () => {
  it('parses JSON and refuses anything else with a message that does not quote it', () => {
    expect(parseJson('{"a":[1]}')).toEqual({ a: [1] });
    expect(() => parseJson('secret-text')).toThrow(new InvalidBody('the body is not JSON'));
  });
});
