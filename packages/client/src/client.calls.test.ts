import { Buffer } from 'node:buffer';
import { KybWebhookError, type ClientRequestTrace, type ReceiverTelemetry } from '@kyb-webhooks/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKybClient, DEFAULT_REQUEST_PREFIX, KybApiError, type KybClientOptions } from './index.js';

// Each client method against answers a `fetch` option gives as real Responses (each is an answer a service could
// send): the URL it asks, what it makes of the body, and the whole message of what it refuses.
const BASE = 'http://127.0.0.1:9';

function client(answer: (url: URL) => Response | Promise<Response>, overrides: Partial<KybClientOptions> = {}) {
  const urls: URL[] = [];
  const kyb = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (input) => {
      const url = new URL(String(input));
      urls.push(url);
      return answer(url);
    },
    ...overrides,
  });
  return { kyb, urls, paths: () => urls.map((url) => url.pathname + url.search) };
}

const json = (body: unknown, init: ResponseInit = {}) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status: 200,
    headers: { 'content-type': 'application/json' },
    ...init,
  });

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

const event = (seq: number, stream = 'dr_1') => ({
  event: 'kyb.data_request.pending_approval',
  event_id: `e${seq}`,
  stream_id: stream,
  seq,
  data: {},
});
const entry = (seq: number) => ({ event_id: `e${seq}`, seq, status: 200 });

describe('paths', () => {
  it('drops every trailing slash of baseUrl', async () => {
    const { kyb, paths } = client(() => json({ deliveries: [] }), { baseUrl: `${BASE}/kyb//` });
    await kyb.deliveries('dr_1');
    expect(paths()).toEqual(['/kyb/api/v1/kyb/data-requests/dr_1/deliveries']);
  });

  it.each([
    [{ requestPrefix: '/api/v2/x//' }, '/api/v2/x/dr_1/deliveries'],
    [{ requestPrefix: '//api/v2/x' }, '/api/v2/x/dr_1/deliveries'],
    [{ dataRequestPath: '/api/v3/{id}//' }, '/api/v3/dr_1/deliveries'],
    [{ dataRequestPath: '//api/v3/{id}' }, '/api/v3/dr_1/deliveries'],
  ])('trims the slashes of %j', async (options, path) => {
    const { kyb, paths } = client(() => json({ deliveries: [] }), options);
    await kyb.deliveries('dr_1');
    expect(paths()).toEqual([path]);
  });

  it('kind data_request sends an sr_ id to the data-request path', async () => {
    const { kyb, paths } = client(() => json({ deliveries: [] }));
    await kyb.deliveries('sr_1', { kind: 'data_request' });
    await kyb.deliveries('sr_1');
    expect(paths()).toEqual([
      '/api/v1/kyb/data-requests/sr_1/deliveries',
      '/api/v1/kyb/signature-requests/sr_1/deliveries',
    ]);
    expect(DEFAULT_REQUEST_PREFIX).toBe('/api/v1/kyb/data-requests');
  });
});

describe('request ids', () => {
  it.each([
    ['', 'an empty string'],
    ['.', '"."'],
    ['..', '".."'],
  ])('refuses %j, naming the call by its path template', async (requestId, what) => {
    const { kyb, urls } = client(() => json({}));
    const calls = [
      [() => kyb.deliveries(requestId), 'GET /api/v1/kyb/data-requests/{id}/deliveries'],
      [() => collect(kyb.events(requestId)), 'GET /api/v1/kyb/data-requests/{id}/events'],
      [() => kyb.redeliver(requestId), 'POST /api/v1/kyb/data-requests/{id}/redeliver'],
      [
        () =>
          client(() => json({}), { attestation: { issuer: 'https://kyb.test', audience: 'a' } }).kyb.release(requestId),
        'GET /api/v1/kyb/data-requests/{requestId}/release',
      ],
    ] as const;
    for (const [call, operation] of calls) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(KybApiError);
      expect(error).toMatchObject({ code: 'invalid_request_id', status: null, attempts: 0, operation });
      expect(error.message).toBe(
        `${operation}: requestId must be the request's id (its stream_id, e.g. 'dr_01jd8x2k7q'), got ${what}.`,
      );
    }
    expect(urls).toHaveLength(0);
  });

  it('refuses an id that is not a string', async () => {
    const { kyb } = client(() => json({}));
    const error = await failure(kyb.deliveries(42 as unknown as string));
    expect(error).toMatchObject({
      code: 'invalid_request_id',
      operation: 'GET /api/v1/kyb/data-requests/{id}/deliveries',
    });
    expect(error.message).toMatch(
      /^GET \/api\/v1\/kyb\/data-requests\/\{id\}\/deliveries: requestId must be .*, got (?!an empty)/,
    );
    expect(error.message).not.toContain('"42"');
  });
});

describe('lists', () => {
  it('names an entry by its place in the whole log, across pages', async () => {
    const { kyb } = client((url) =>
      url.searchParams.get('cursor') === null
        ? json({ deliveries: [entry(0), entry(1)], next_cursor: 'p2' })
        : json({ deliveries: [{ event_id: 'e2' }] }),
    );
    const error = await failure(kyb.deliveries('dr_1'));
    expect(error).toMatchObject({ code: 'invalid_response', status: 200, attempts: 1 });
    expect(error.message).toBe(
      "GET /api/v1/kyb/data-requests/dr_1/deliveries: unexpected response body: deliveries[2].seq is missing, not the event's seq (an integer): if the service names it otherwise, set deliveryLog.seqField.",
    );
  });

  it('stops past paging.maxPages with too_many_pages, saying which list', async () => {
    const { kyb, urls } = client(
      (url) => json({ deliveries: [entry(urls.length)], next_cursor: `c${url.search.length}` }),
      {
        paging: { maxPages: 2 },
      },
    );
    const error = await failure(kyb.deliveries('dr_1'));
    expect(error).toMatchObject({ code: 'too_many_pages', status: 200 });
    expect(error.message).toBe(
      'GET /api/v1/kyb/data-requests/dr_1/deliveries: the deliveries list has more than 2 pages (paging.maxPages): the call fails rather than end with part of it. Raise paging.maxPages, or ask for larger pages with pageSize.',
    );
    expect(urls).toHaveLength(2);
  });

  it('a next page it cannot read is unreadable, without quoting it', async () => {
    const { kyb } = client(() =>
      json(
        { deliveries: [entry(0)] },
        { headers: { link: '<http://[::1>; rel="next"', 'content-type': 'application/json' } },
      ),
    );
    const error = await failure(kyb.deliveries('dr_1'));
    expect(error).toMatchObject({ code: 'invalid_response' });
    expect(error.message).toBe('GET /api/v1/kyb/data-requests/dr_1/deliveries: unexpected response body: unreadable.');
  });

  it.each([
    [{ total: 2 }, 'total 2 (1 entries read)'],
    [{ total_count: '3' }, 'total 3 (1 entries read)'],
    [{ page: 1, total_pages: 2 }, 'total_pages 2 (1 pages read)'],
    [{ page: 0, totalPages: 2, total: 1 }, 'total_pages 2 (1 pages read)'],
  ])(
    'refuses a deliveries page saying %j with no next page: invalid_response, never a short log',
    async (fields, seen) => {
      const { kyb } = client(() => json({ deliveries: [entry(9)], ...fields }));
      const error = await failure(kyb.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'invalid_response', status: 200, attempts: 1 });
      expect(error.message).toBe(
        `GET /api/v1/kyb/data-requests/dr_1/deliveries: unexpected response body: a page says ${seen} but names no next page (next, next_cursor, next_after_seq, a Link or X-Next-Cursor header).`,
      );
    },
  );

  it('ends a deliveries list whose totals are read, whatever the page numbers count from', async () => {
    const { kyb } = client((url) =>
      url.searchParams.get('cursor') === null
        ? json({ deliveries: [entry(0), entry(1)], total: 3, page: 0, total_pages: 2, next_cursor: 'p2' })
        : json({ deliveries: [entry(2)], total: 3, page: 1, total_pages: 2 }),
    );
    expect((await kyb.deliveries('dr_1')).map((d) => d.seq)).toEqual([0, 1, 2]);
    const told = client(() => json({ deliveries: [entry(0)], total: 5, has_more: false }));
    expect(await told.kyb.deliveries('dr_1')).toHaveLength(1);
  });

  it('asks for the events after the last seq whatever total says, a total of the whole stream', async () => {
    const { kyb } = client((url) =>
      url.searchParams.get('after_seq') === '4'
        ? json({ events: [event(5)], total: 6 })
        : json({ events: [], total: 6 }),
    );
    expect((await collect(kyb.events('dr_1', { afterSeq: 4 }))).map((e) => e.seq)).toEqual([5]);
  });

  it('sends the page size of the call, else of the client, else none', async () => {
    const { kyb, paths } = client(() => json({ events: [] }), { pageSize: 7 });
    await collect(kyb.events('dr_1', { pageSize: 5, afterSeq: 3 }));
    await collect(kyb.events('dr_1'));
    const bare = client(() => json({ events: [] }));
    await collect(bare.kyb.events('dr_1'));
    expect([...paths(), ...bare.paths()]).toEqual([
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=3&limit=5',
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=-1&limit=7',
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=-1',
    ]);
  });

  it('pages a bare list of events after the last seq, and stops at an empty page', async () => {
    const { kyb, paths } = client((url) => {
      const after = Number(url.searchParams.get('after_seq'));
      return json([0, 1, 2, 3].filter((seq) => seq > after && seq <= after + 2).map((seq) => event(seq)));
    });
    expect((await collect(kyb.events('dr_1'))).map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(paths()).toEqual([
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=-1',
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=1',
      '/api/v1/kyb/data-requests/dr_1/events?after_seq=3',
    ]);
  });

  it.each([
    [[event(0), event(0)], 'events out of order (seq 0 after 0)'],
    [[event(2), event(1)], 'events out of order (seq 1 after 2)'],
    [[event(5)], 'events out of order (seq 5 after 5)'],
  ])('refuses events that do not move forward: %j', async (events, why) => {
    const { kyb } = client(() => json({ events, has_more: false }));
    const error = await failure(collect(kyb.events('dr_1', { afterSeq: events.length === 1 ? 5 : -1 })));
    expect(error).toMatchObject({ code: 'invalid_response', status: 200, attempts: 1 });
    expect(error.message).toBe(`GET /api/v1/kyb/data-requests/dr_1/events: unexpected response body: ${why}.`);
  });
});

describe('release', () => {
  const attestation = { issuer: 'https://kyb.test', audience: 'merchant' };

  it.each([
    ['', 'text/plain'],
    ['  ', 'text/plain'],
    ['{}', 'application/json'],
    ['{"error":{"message":"Not released yet"}}', 'application/json'],
    ['{"error":{"code":"NOT_RELEASED"}}', 'application/json'],
    ['{"errors":[{"code":"not_released"}]}', 'application/json'],
  ])('a 404 of %j (%s) is not released', async (body, type) => {
    const { kyb } = client(() => new Response(body, { status: 404, headers: { 'content-type': type } }), {
      attestation,
    });
    await expect(kyb.release('dr_1')).resolves.toEqual({ status: 'not_released' });
  });

  it('a 404 that is not JSON (a wrong baseUrl reaching another server) is request_not_found, never "not released"', async () => {
    const page = '<html><body>Not Found: sk_live_abc</body></html>';
    const { kyb } = client(() => new Response(page, { status: 404, headers: { 'content-type': 'text/html' } }), {
      attestation,
    });
    const error = await failure(kyb.release('dr_1'));
    expect(error).toMatchObject({ status: 404, code: 'request_not_found', attempts: 1 });
    expect(error.message).toBe(
      'GET /api/v1/kyb/data-requests/dr_1/release: 404 (request_not_found) with a body that is not JSON, so not the ' +
        'KYB API\'s "not released". Check the baseUrl option and its path prefix: the release is asked at ' +
        '{baseUrl}/api/v1/kyb/data-requests/{id}/release.',
    );
  });

  it.each([['{"code":"request_not_found"}'], ['{"errors":[{"code":"REQUEST_NOT_FOUND"}]}']])(
    'a 404 of %s, naming another code, is that error',
    async (body) => {
      const { kyb } = client(() => json(body, { status: 404 }), { attestation });
      const error = await failure(kyb.release('dr_1'));
      expect(error).toMatchObject({ status: 404, code: 'request_not_found', attempts: 1 });
      expect(error.message).toBe(
        'GET /api/v1/kyb/data-requests/dr_1/release: the KYB API answered 404 (request_not_found).',
      );
    },
  );

  it('a JWKS the API cannot serve is jwks_unavailable, not a rejected release', async () => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'RS256', kid: 'k1', typ: 'kyb-attestation+jwt' })}.${part({ event_id: '01J', seq: 3 })}.c2ln`;
    const { kyb } = client(
      (url) => (url.pathname.endsWith('/release') ? json({ attestation: token }) : new Response('', { status: 503 })),
      { attestation },
    );
    const error = await failure(kyb.release('dr_1'));
    expect(error).toMatchObject({ status: 200, code: 'jwks_unavailable' });
    expect(error.message).toBe(
      "GET /api/v1/kyb/data-requests/dr_1/release: the release's attestation was rejected (jwks_unavailable); it is not a genuine release of this request.",
    );
  });

  it('a bare token labelled JSON is not JSON: invalid_response, before any key is fetched', async () => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'RS256', kid: 'k1', typ: 'kyb-attestation+jwt' })}.${part({ event_id: '01J', seq: 3 })}.c2ln`;
    const { kyb, urls } = client(() => json(token), { attestation });
    const error = await failure(kyb.release('dr_1'));
    expect(error).toMatchObject({ status: 200, code: 'invalid_response' });
    expect(error.message).toBe(
      'GET /api/v1/kyb/data-requests/dr_1/release: unexpected response body: the body is not JSON.',
    );
    expect(urls).toHaveLength(1);
  });

  it('a token inside a JSON list is no token: invalid_response, saying the body holds none', async () => {
    const { kyb, urls } = client(() => json(['aGVhZA.Y2xhaW1z.c2ln']), { attestation });
    const error = await failure(kyb.release('dr_1'));
    expect(error).toMatchObject({ status: 200, code: 'invalid_response' });
    expect(error.message).toBe(
      'GET /api/v1/kyb/data-requests/dr_1/release: unexpected response body: release: no attestation JWT in the body.',
    );
    expect(urls).toHaveLength(1);
  });

  it('without attestation options is config_invalid', async () => {
    const error = await failure(client(() => json({})).kyb.release('dr_1'));
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error).toMatchObject({ code: 'config_invalid' });
  });
});

describe('the route an observability layer names each call by', () => {
  it("is the call's path template, the request id as {id}, whatever the id looks like", async () => {
    const routes: string[] = [];
    const telemetry: ReceiverTelemetry = {
      around(_operation, trace, run) {
        routes.push((trace as ClientRequestTrace).route);
        return run();
      },
    };
    const { kyb } = client(
      (url) =>
        url.pathname.endsWith('/release')
          ? new Response('', { status: 404 })
          : url.pathname.endsWith('/redeliver')
            ? json({ queued: 0 })
            : json({ [url.pathname.split('/').at(-1)!]: [] }),
      { telemetry, attestation: { issuer: 'https://kyb.test', audience: 'merchant' } },
    );
    // Ids without a digit: a route guessed from the path would keep them.
    await kyb.release('dr_abc');
    await kyb.deliveries('dr_abc');
    await collect(kyb.events('dr_abc'));
    await kyb.redeliver('sr_abc');
    expect(routes).toEqual([
      '/api/v1/kyb/data-requests/{id}/release',
      '/api/v1/kyb/data-requests/{id}/deliveries',
      '/api/v1/kyb/data-requests/{id}/events',
      '/api/v1/kyb/signature-requests/{id}/redeliver',
    ]);
  });
});

describe('redeliver, reactivate and request bodies', () => {
  it.each([
    ['', { queued: undefined }],
    ['  \n', { queued: undefined }],
    ['{"queued":3,"batch":"b1"}', { queued: 3, batch: 'b1' }],
    ['{"queued":"3"}', { queued: undefined }],
  ])('redeliver reads %j', async (body, result) => {
    const { kyb, paths } = client(() => json(body));
    await expect(kyb.redeliver('dr_1')).resolves.toStrictEqual(result);
    expect(paths()).toEqual(['/api/v1/kyb/data-requests/dr_1/redeliver']);
  });

  it.each([['5'], ['null'], ['[1]'], ['"queued"'], ['queued: 3'], ['OK']])(
    'redeliver and reactivate take a 2xx of %s as done, its fields unknown',
    async (body) => {
      const { kyb } = client(() => new Response(body, { status: 200, headers: { 'content-type': 'text/plain' } }));
      await expect(kyb.redeliver('dr_1')).resolves.toStrictEqual({ queued: undefined });
      await expect(kyb.reactivate()).resolves.toStrictEqual({ reactivated: true });
    },
  );

  it('redeliver names a 404 without a code request_not_found', async () => {
    const { kyb } = client(() => new Response('', { status: 404 }));
    await expect(kyb.redeliver('dr_1')).rejects.toMatchObject({ status: 404, code: 'request_not_found' });
  });

  it.each([
    ['', true],
    ['{}', true],
    ['{"reactivated":false}', false],
    ['{"reactivated":"no"}', true],
  ])('reactivate reads %j as reactivated: %s', async (body, reactivated) => {
    await expect(client(() => json(body)).kyb.reactivate()).resolves.toMatchObject({ reactivated });
  });

  it.each([
    ['', undefined],
    [' \n ', undefined],
    ['{"a":1}', { a: 1 }],
    ['[]', []],
  ])('request reads %j', async (body, parsed) => {
    await expect(client(() => json(body)).kyb.request('GET', '/api/v1/kyb/x')).resolves.toMatchObject({
      status: 200,
      body: parsed,
    });
  });

  it('request refuses a body that is not JSON, naming the call', async () => {
    const error = await failure(client(() => json('<html>')).kyb.request('get', '/api/v1/kyb/x', { query: { a: 1 } }));
    expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
    expect(error.message).toBe('GET /api/v1/kyb/x: unexpected response body: the body is not JSON.');
  });
});

describe('request() arguments', () => {
  it.each([['G3T'], ['GE T'], [' GET'], ['GET '], [''], ['A'.repeat(17)], [5], [['GET']], ['GET\r\n']])(
    'refuses the method %j',
    async (method) => {
      const { kyb, urls } = client(() => json({}));
      const error = await failure(kyb.request(method as string, '/api/v1/kyb/x'));
      expect(error).toBeInstanceOf(KybWebhookError);
      expect(error).toMatchObject({ code: 'config_invalid' });
      expect(error.message).toMatch(
        /^KybClient\.request: method must be an HTTP method such as 'GET' or 'POST'; got .+\.$/,
      );
      expect(urls).toHaveLength(0);
    },
  );

  it('accepts a method of 16 letters, upper-cased', async () => {
    const seen: string[] = [];
    const kyb = createKybClient({
      baseUrl: BASE,
      apiKey: 'k',
      fetch: async (_input, init) => {
        seen.push(init!.method!);
        return json({});
      },
    });
    await kyb.request('propfindpropfind', '/api/v1/kyb/x');
    expect(seen).toEqual(['PROPFINDPROPFIND']);
  });

  const fix =
    "a path of the KYB API starting with '/', e.g. '/api/v1/kyb/data-requests' (query parameters go in `query`)";

  it.each([
    ['api/v1/kyb/x', 'a string that is not one'],
    ['//evil.example/x', 'a string that is not one'],
    ['/x?y=1', 'a string that is not one'],
    ['/x#y', 'a string that is not one'],
    ['/x\\y', 'a string that is not one'],
    ['/x y', 'a string that is not one'],
  ])('refuses the path %j', async (path, got) => {
    const error = await failure(client(() => json({})).kyb.request('GET', path));
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect(error.message).toBe(`KybClient.request: path must be ${fix}; got ${got}.`);
  });

  it('refuses a path that is not a string, describing it', async () => {
    const error = await failure(client(() => json({})).kyb.request('GET', 5 as unknown as string));
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect(error.message).toMatch(
      /^KybClient\.request: path must be a path of the KYB API starting with '\/'.*; got (?!a string that is not one).+\.$/,
    );
  });

  it.each([
    ['/api/./x'],
    ['/api/../x'],
    ['/api/%2e/x'],
    ['/api/%2E%2e/x'],
    ['/api/.%2e/x'],
    ['/api/%2e./x'],
    ['/api/x/..'],
  ])('refuses the dot segments of %j', async (path) => {
    const { kyb, urls } = client(() => json({}));
    const error = await failure(kyb.request('GET', path));
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect(error.message).toBe(`KybClient.request: path must not have "." or ".." segments: use ${fix}.`);
    expect(urls).toHaveLength(0);
  });

  it.each([
    ['/api/a%2e/x'],
    ['/api/%2eabc'],
    ['/api/a.%2e'],
    ['/api/.%2ex'],
    ['/api/a%2e.'],
    ['/api/%2e.x'],
    ['/api/...'],
  ])('sends %j, which has no dot segment', async (path) => {
    const { kyb, urls } = client(() => json({}));
    await kyb.request('GET', path);
    expect(urls).toHaveLength(1);
  });

  it('appends the query, and nothing for an empty one', async () => {
    const { kyb, urls } = client(() => json({}));
    await kyb.request('GET', '/api/v1/kyb/x', { query: {} });
    await kyb.request('GET', '/api/v1/kyb/x', { query: { a: 1, b: 'x y', c: true } });
    expect(urls.map(String)).toEqual([`${BASE}/api/v1/kyb/x`, `${BASE}/api/v1/kyb/x?a=1&b=x+y&c=true`]);
  });
});

describe('call options are checked by every method, before any request', () => {
  it.each([
    ['release', (kyb: ReturnType<typeof client>['kyb']) => kyb.release('dr_1', { timeout: 5 } as never)],
    ['deliveries', (kyb: ReturnType<typeof client>['kyb']) => kyb.deliveries('dr_1', { timeout: 5 } as never)],
    ['redeliver', (kyb: ReturnType<typeof client>['kyb']) => kyb.redeliver('dr_1', { kind: 'other' } as never)],
    ['reactivate', (kyb: ReturnType<typeof client>['kyb']) => kyb.reactivate({ timeout: 5 } as never)],
    ['request', (kyb: ReturnType<typeof client>['kyb']) => kyb.request('GET', '/x', { params: {} } as never)],
    ['events', (kyb: ReturnType<typeof client>['kyb']) => collect(kyb.events('dr_1', { signal: 5 } as never))],
  ])('%s', async (_name, call) => {
    const { kyb, urls } = client(() => json({}), { attestation: { issuer: 'https://kyb.test', audience: 'a' } });
    const error = await failure(call(kyb));
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect(urls).toHaveLength(0);
  });

  it('names what kind and signal must be', async () => {
    const { kyb } = client(() => json({}));
    await expect(kyb.deliveries('dr_1', { kind: 'data' } as never)).rejects.toThrow(
      /must be 'data_request' or 'signature_request'; got /,
    );
    await expect(kyb.deliveries('dr_1', { signal: 'stop' } as never)).rejects.toThrow(/an AbortSignal/);
  });
});

describe('client options', () => {
  const create = (overrides: Record<string, unknown>) => () =>
    createKybClient({ baseUrl: BASE, apiKey: 'k', ...overrides } as unknown as KybClientOptions);

  it.each([
    [{ baseUrl: 'https://user@api.kyb.example.com' }, /`baseUrl` must not carry credentials/],
    [{ baseUrl: 'https://:pw@api.kyb.example.com' }, /`baseUrl` must not carry credentials/],
    [{ baseUrl: 'https://api.kyb.example.com/#frag' }, /`baseUrl` must not have a query or fragment/],
    [{ baseUrl: 'http://api.kyb.example.com' }, /http: only on 127\.0\.0\.1, localhost or \[::1\]/],
    [
      { apiKey: 5 },
      /`apiKey` must be the API key from the KYB dashboard \(a string\); got .+ \(an unset environment variable\?\)/,
    ],
    [
      { dataRequestPath: '/x/{id}/y{id}' },
      /`dataRequestPath` must hold \{id\} once, as a whole segment, where the request id goes/,
    ],
    [{ signatureRequestPath: '/x/{id}/{id}' }, /`signatureRequestPath` must hold \{id\} once/],
    [{ paging: { cursorParam: 'a b' } }, /`paging.cursorParam` must be a query parameter name such as 'cursor'; got /],
    [{ paging: { cursorParam: '' } }, /`paging.cursorParam` must be a query parameter name/],
    [{ paging: { cursorParam: 5 } }, /`paging.cursorParam` must be a query parameter name/],
    [{ paging: { cursorParam: 'x'.repeat(65) } }, /`paging.cursorParam` must be a query parameter name/],
    [
      { deliveryLog: { seqField: '' } },
      /`deliveryLog.seqField` must be the name of a field of the entries, e.g. 'seq'; got /,
    ],
    [{ deliveryLog: { eventIdField: 7 } }, /`deliveryLog.eventIdField` must be the name of a field/],
    [{ deliveryLog: { seqField: ['seq'] } }, /`deliveryLog.seqField` must be the name of a field/],
    [{ deliveryLog: { statusField: 'x'.repeat(129) } }, /`deliveryLog.statusField` must be the name of a field/],
  ])('refuses %j', (overrides, message) => {
    expect(create(overrides)).toThrow(message);
    expect(create(overrides)).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  });

  it.each([
    [{ paging: { cursorParam: 'ab' } }],
    [{ paging: { cursorParam: 'page[after]' } }],
    [{ paging: { cursorParam: 'x'.repeat(64) } }],
    [{ deliveryLog: { seqField: 'x'.repeat(128) } }],
    [{ deliveryLog: { statusField: 'a' } }],
  ])('accepts %j', (overrides) => {
    expect(create(overrides)).not.toThrow();
  });

  it('sends a cursor back in the cursorParam named, and reads the fields deliveryLog names', async () => {
    const { kyb, paths } = client(
      (url) =>
        url.searchParams.get('ab') === null
          ? json({ deliveries: [{ id: 'e0', n: '0', code: 204 }], next_cursor: 'p2' })
          : json({ deliveries: [{ id: 'e1', n: 1, code: 500 }] }),
      { paging: { cursorParam: 'ab' }, deliveryLog: { eventIdField: 'id', seqField: 'n', statusField: 'code' } },
    );
    expect((await kyb.deliveries('dr_1')).map((d) => [d.event_id, d.seq, d.acknowledged])).toEqual([
      ['e0', 0, true],
      ['e1', 1, false],
    ]);
    expect(paths()).toEqual([
      '/api/v1/kyb/data-requests/dr_1/deliveries',
      '/api/v1/kyb/data-requests/dr_1/deliveries?ab=p2',
    ]);
  });
});

describe('retry options', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /**
   * On fake timers (a loaded machine only makes real waits longer): a GET answered 503, then its retry, is not
   * asked again `waitMs` − 1 ms after the first attempt, and is at `waitMs`.
   */
  const expectRetryAfter = async (retry: KybClientOptions['retry'], waitMs: number) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let attempts = 0;
    const kyb = createKybClient({
      baseUrl: BASE,
      apiKey: 'k',
      retry: { maxRetries: 1, ...retry },
      random: () => 0,
      fetch: async () => {
        attempts++;
        return new Response('', { status: 503 });
      },
    });
    const call = failure(kyb.request('GET', '/api/v1/kyb/x'));
    await vi.advanceTimersByTimeAsync(waitMs - 1);
    expect(attempts, `no retry after ${waitMs - 1} ms`).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts, `the retry after ${waitMs} ms`).toBe(2);
    expect(await call).toMatchObject({ status: 503, attempts: 2 });
  };

  it('waits half of baseDelayMs first (the draw 0)', async () => {
    await expectRetryAfter({ baseDelayMs: 300, maxDelayMs: 10_000 }, 150);
  });

  it('never waits past maxDelayMs', async () => {
    // min(1000, 60) / 2 with the draw 0.
    await expectRetryAfter({ baseDelayMs: 1000, maxDelayMs: 60 }, 30);
  });
});
