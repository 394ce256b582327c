import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKybClient, InsufficientCreditError, KybApiError, type KybClientOptions } from './index.js';
import { parseRetryAfter } from './http.js';

// What a failed call looks like to its caller: the code, the status and the whole message, for answers a `fetch`
// option hands back as real Responses (a canned answer is the point: each is one the service could send).
const BASE = 'http://127.0.0.1:9';

interface Seen {
  url: string;
  init: RequestInit;
}

function client(answer: (seen: Seen) => Response | Promise<Response>, overrides: Partial<KybClientOptions> = {}) {
  const seen: Seen[] = [];
  const kyb = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (input, init) => {
      const call = { url: String(input), init: init ?? {} };
      seen.push(call);
      return answer(call);
    },
    ...overrides,
  });
  return { kyb, seen };
}

async function failure(promise: Promise<unknown>): Promise<KybApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(KybApiError);
  return error as KybApiError;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('the error of an answered call', () => {
  it.each([
    [401, 'unauthorized', '. Check the apiKey option: it is sent as the raw Authorization header.'],
    [403, 'forbidden', '. Check the apiKey option: it is sent as the raw Authorization header.'],
    [429, 'rate_limited', '.'],
    [503, 'service_unavailable', '.'],
    [500, 'http_error', '.'],
    [400, 'http_error', '.'],
    [404, 'http_error', '.'],
    [300, 'http_error', '. Redirects are not followed: check the baseUrl option.'],
    [302, 'http_error', '. Redirects are not followed: check the baseUrl option.'],
    [399, 'http_error', '. Redirects are not followed: check the baseUrl option.'],
  ])('a %i without a code is %s, and the message says so', async (status, code, hint) => {
    const { kyb } = client(() => new Response(status >= 300 && status < 400 ? null : 'oops', { status }));
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status, code, operation: 'GET /api/v1/kyb/things', attempts: 1 });
    expect(error.message).toBe(`GET /api/v1/kyb/things: the KYB API answered ${status} (${code})${hint}`);
  });

  it("keeps the service's code over the status's own, in the message too", async () => {
    const { kyb } = client(() => json(403, { error: { code: 'endpoint_quarantined' } }));
    const error = await failure(kyb.reactivate());
    expect(error).toMatchObject({ status: 403, code: 'endpoint_quarantined' });
    expect(error.message).toBe(
      'POST /api/v1/kyb/webhook-endpoint/reactivate: the KYB API answered 403 (endpoint_quarantined). Check the apiKey option: it is sent as the raw Authorization header.',
    );
  });

  it('a 402 insufficient_credit says how much is missing, in what currency, when the body tells', async () => {
    const cases: [unknown, string][] = [
      [{ error: { code: 'insufficient_credit', shortfall_cents: 380, currency: 'eur' } }, ' (380 cents short, EUR)'],
      [{ code: 'insufficient_credit', required_cents: 500, available_cents: 100 }, ' (400 cents short)'],
      [{ code: 'insufficient_credit', required_cents: 500 }, ''],
      [{ code: 'insufficient_credit' }, ''],
    ];
    for (const [body, missing] of cases) {
      const { kyb } = client(() => json(402, body));
      const error = await failure(kyb.request('POST', '/api/v1/kyb/data-requests', { body: {} }));
      expect(error).toBeInstanceOf(InsufficientCreditError);
      expect(error.message).toBe(
        `POST /api/v1/kyb/data-requests: 402 insufficient_credit${missing}. The request cannot be afforded; top up the credit and create it again.`,
      );
    }
  });

  it.each([
    ['Payment Required', 'text/plain', ''],
    ['', 'text/plain', ''],
    ['{}', 'application/json', ''],
    ['{"error":"Not enough credit for this request"}', 'application/json', ''],
    ['{"errors":[{"code":"INSUFFICIENT_CREDIT"}]}', 'application/json', ''],
    [
      '{"error":{"code":"INSUFFICIENT_CREDIT","shortfall_cents":380,"currency":"eur"}}',
      'application/json',
      ' (380 cents short, EUR)',
    ],
  ])('a 402 of %j (%s) is insufficient_credit, the only 402 of spec 7', async (body, type, missing) => {
    const { kyb } = client(() => new Response(body, { status: 402, headers: { 'content-type': type } }));
    const error = await failure(kyb.request('POST', '/api/v1/kyb/data-requests', { body: {} }));
    expect(error).toBeInstanceOf(InsufficientCreditError);
    expect(error).toMatchObject({ status: 402, code: 'insufficient_credit', attempts: 1 });
    expect(error.message).toBe(
      `POST /api/v1/kyb/data-requests: 402 insufficient_credit${missing}. The request cannot be afforded; top up the credit and create it again.`,
    );
  });

  it('a 402 naming another code, or another status naming insufficient_credit, is no InsufficientCreditError', async () => {
    const other = await failure(client(() => json(402, { code: 'payment_required' })).kyb.reactivate());
    expect(other).not.toBeInstanceOf(InsufficientCreditError);
    expect(other).toMatchObject({ status: 402, code: 'payment_required' });
    const conflict = await failure(client(() => json(409, { code: 'insufficient_credit' })).kyb.reactivate());
    expect(conflict).not.toBeInstanceOf(InsufficientCreditError);
    expect(conflict).toMatchObject({ status: 409, code: 'insufficient_credit' });
    expect(conflict.message).toBe(
      'POST /api/v1/kyb/webhook-endpoint/reactivate: the KYB API answered 409 (insufficient_credit).',
    );
  });

  it('a 300 is not a success, even with a body under maxResponseBytes', async () => {
    const { kyb } = client(() => json(300, { things: [] }));
    await expect(kyb.request('GET', '/api/v1/kyb/things')).rejects.toMatchObject({ status: 300, code: 'http_error' });
  });

  it('reads an error body past maxResponseBytes for its code (error bodies have their own bound)', async () => {
    const { kyb } = client(() => json(300, { code: 'moved_elsewhere', padding: 'x'.repeat(500) }), {
      maxResponseBytes: 64,
    });
    await expect(kyb.request('GET', '/api/v1/kyb/things')).rejects.toMatchObject({
      status: 300,
      code: 'moved_elsewhere',
    });
  });

  it('a 2xx that declares a length over maxResponseBytes is response_too_large before a byte is read', async () => {
    const { kyb } = client(() => new Response('{}', { status: 200, headers: { 'content-length': '1000' } }), {
      maxResponseBytes: 100,
    });
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status: 200, code: 'response_too_large', attempts: 1 });
    expect(error.message).toBe(
      "GET /api/v1/kyb/things: the response body is over maxResponseBytes (100 bytes). Raise the client's maxResponseBytes option, or ask for smaller pages with pageSize.",
    );
  });

  it('an answer of status 0 (a network error or opaque redirect Response) is an error, not a success', async () => {
    const { kyb } = client(() => Response.error());
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status: 0, code: 'http_error', attempts: 1 });
    expect(error.message).toBe('GET /api/v1/kyb/things: the KYB API answered 0 (http_error).');
  });

  it('a 2xx without a body is an empty answer', async () => {
    const { kyb } = client(() => new Response(null, { status: 204 }));
    await expect(kyb.request('DELETE', '/api/v1/kyb/things/1')).resolves.toMatchObject({
      status: 204,
      body: undefined,
    });
    expect((await client(() => new Response(null, { status: 202 })).kyb.reactivate()).reactivated).toBe(true);
  });
});

describe('what is sent', () => {
  it('asks for JSON, and labels a body JSON only when there is one', async () => {
    const { kyb, seen } = client(() => json(200, {}));
    await kyb.request('POST', '/api/v1/kyb/data-requests', { body: { fields: ['company_name'] } });
    await kyb.request('GET', '/api/v1/kyb/data-requests');
    const [post, get] = seen.map((call) => new Headers(call.init.headers));
    expect(post!.get('accept')).toBe('application/json');
    expect(post!.get('content-type')).toBe('application/json');
    expect(seen[0]!.init.body).toBe('{"fields":["company_name"]}');
    expect(get!.get('accept')).toBe('application/json');
    expect(get!.get('content-type')).toBeNull();
    expect(get!.get('authorization')).toBe('kyb_test_key_1');
    // A fetch of one's own sees no body at all for a call without one, not a body of undefined.
    expect(seen[1]!.init).not.toHaveProperty('body');
  });
});

describe('the error of a call without an answer', () => {
  const refused = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause });

  it.each([
    ['a system code', refused(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })), ': ECONNREFUSED'],
    ['a code on the error itself', Object.assign(new TypeError('x'), { code: 'UND_ERR_SOCKET' }), ': UND_ERR_SOCKET'],
    ['no code', new TypeError('fetch failed'), ''],
    ['a null cause', refused(null), ''],
    ['a lower-case code', refused({ code: 'econnreset' }), ''],
    ['a code with a suffix', refused({ code: 'ECONNRESET!' }), ''],
    ['a code with a prefix', refused({ code: 'xECONNRESET' }), ''],
    ['a numeric code', refused({ code: 104 }), ''],
    ['a code that is a list', refused({ code: ['ECONNRESET'] }), ''],
    ['a code four causes deep', refused(refused(refused({ cause: { code: 'ENOTFOUND' } }))), ''],
    ['a code three causes deep', refused(refused({ cause: { code: 'ENOTFOUND' } })), ': ENOTFOUND'],
    ['a first code before a deeper one', refused({ code: 'EPIPE', cause: { code: 'ENOTFOUND' } }), ': EPIPE'],
    ['null thrown', null, ''],
    ['undefined thrown', undefined, ''],
  ])('with %s names it in the message', async (_what, thrown, reason) => {
    const { kyb } = client(() => {
      throw thrown;
    });
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status: null, code: 'network_error', attempts: 1 });
    expect(error.message).toBe(
      `GET /api/v1/kyb/things failed before the service answered (network error${reason}) after 1 attempt(s).`,
    );
    expect(error.cause).toBeUndefined();
  });

  it('a timeout says after how many attempts, and its cause is the timeout', async () => {
    const { kyb } = client(
      ({ init }) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason as Error));
        }),
      { timeoutMs: 30, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } },
    );
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status: null, code: 'timeout', attempts: 2 });
    expect(error.message).toBe('GET /api/v1/kyb/things timed out after 2 attempt(s).');
    expect(error.cause).toMatchObject({ name: 'TimeoutError', message: 'The KYB API call timed out.' });
  });
});

describe('parseRetryAfter', () => {
  // HTTP dates are GMT whatever the zone the client runs in: read them in one that is not (this machine's may be UTC,
  // where a date read as local time would pass as GMT).
  beforeAll(() => {
    vi.stubEnv('TZ', 'Asia/Tokyo');
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['12 seconds', undefined],
    ['12abc', undefined],
    ['x Thu, 01 Jan 2026 00:00:30 GMT', undefined],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    // The obsolete forms RFC 9110 5.6.7 says a recipient must accept: RFC 850 and asctime.
    ['Thursday, 01-Jan-26 00:00:30 GMT', 30_000],
    ['Thu Jan  1 00:00:30 2026', 30_000],
    ['Thu Jan 15 00:00:30 2026', 14 * 86_400_000 + 30_000],
    // A zone after the year is not asctime: the date is read in the zone it names, not given GMT on top.
    ['Wed Dec 31 23:00:30 2025 -0100', 30_000],
    ['Thu, 99 Foo 2026', undefined],
    ['12345678901', undefined],
    ['1234567890', 1_234_567_890_000],
  ])('%s → %s', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
