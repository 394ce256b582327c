import { API_SHAPE_VARIANTS, createTestSigner, startKybService, type KybService } from '@kyb-webhooks/testing';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createKybClient, InsufficientCreditError, KybApiError, type KybClientOptions } from './index.js';

// One service for the file: generating its RSA key is most of a service's start-up cost. Each test creates its own
// requests and looks only at the API calls made since it began.
let service: KybService;
let firstCall = 0;

beforeAll(async () => {
  service = await startKybService();
});
afterAll(async () => {
  await service.stop();
});
beforeEach(() => {
  firstCall = service.apiCalls.length;
});

function calls() {
  return service.apiCalls.slice(firstCall);
}

function client(overrides: Partial<KybClientOptions> = {}) {
  return createKybClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    attestation: { issuer: service.issuer, audience: service.audience },
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...overrides,
  });
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('authentication', () => {
  it('sends the raw API key as Authorization on every call', async () => {
    const id = await service.createDataRequest();
    await client().deliveries(id);
    expect(service.apiCalls.at(-1)).toMatchObject({ authorized: true, status: 200 });
  });

  it.each([
    ['release', (c: ReturnType<typeof client>, id: string) => c.release(id)],
    ['deliveries', (c: ReturnType<typeof client>, id: string) => c.deliveries(id)],
    ['events', (c: ReturnType<typeof client>, id: string) => collect(c.events(id))],
    ['redeliver', (c: ReturnType<typeof client>, id: string) => c.redeliver(id)],
    ['reactivate', (c: ReturnType<typeof client>) => c.reactivate()],
  ])('%s with a wrong key rejects with 401 unauthorized, and the message names no key', async (_name, call) => {
    const id = await service.createDataRequest();
    const error = await call(client({ apiKey: 'kyb_wrong_key_123' }), id).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KybApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(String((error as Error).message)).not.toContain('kyb_wrong_key_123');
    expect(calls().filter((c) => c.status === 401)).toHaveLength(1); // a 4xx is not retried
  });
});

describe('release', () => {
  it('answers not_released (404) before the release, without throwing', async () => {
    const id = await service.createDataRequest();
    await expect(client().release(id)).resolves.toEqual({ status: 'not_released' });
  });

  it('answers released with verified claims bound to the request and answers keyed by subject and name', async () => {
    const id = await service.createDataRequest();
    const released = await service.release(id);
    const result = await client().release(id);
    expect(result.status).toBe('released');
    if (result.status !== 'released') return;
    expect(result.token).toBe(released.attestation);
    expect(result.claims).toMatchObject({
      request_id: id,
      stream_id: id,
      event_id: released.event_id,
      seq: released.seq,
    });
    const directors = result.answers.byName('director_name');
    expect(directors.map((answer) => answer.value).sort()).toEqual(['Jane Doe', 'Rahul Mehta']);
    expect(result.answers.get(directors[0]!.subject, 'director_name')).toEqual(directors[0]);
  });

  it('answers payload_expired (410) after the values were purged', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    service.purge(id);
    await expect(client().release(id)).resolves.toEqual({ status: 'payload_expired' });
  });

  it('answers released for a release pulled after its attestation expired (the API serves the same token within retention)', async () => {
    const id = await service.createDataRequest();
    const released = await service.release(id);
    // Two hours on: the service's 600 s attestation has expired, the release is still retained.
    const later = client({ now: () => Date.now() + 2 * 3_600_000 });
    await expect(later.release(id)).resolves.toMatchObject({ status: 'released', token: released.attestation });
  });

  it('rejects a release re-signed by a key the KYB JWKS does not publish', async () => {
    const id = await service.createDataRequest();
    const released = await service.release(id);
    const stranger = await createTestSigner({ issuer: service.issuer, audience: service.audience });
    service.forgeRelease(id, await stranger.attest(released));
    await expect(client().release(id)).rejects.toMatchObject({ name: 'KybApiError', code: 'attestation_rejected' });
  });

  it('a verifier failure that names no code (here the `now` clock throws) is a rejected attestation_invalid, the error its cause', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    const broken = new TypeError('clock failed');
    const error = await client({
      now: () => {
        throw broken;
      },
    })
      .release(id)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KybApiError);
    expect(error).toMatchObject({ status: 200, code: 'attestation_rejected', cause: broken });
    expect((error as Error).message).toBe(
      `GET /api/v1/kyb/data-requests/${id}/release: the release's attestation was rejected (attestation_invalid); it is not a genuine release of this request.`,
    );
  });

  it('reads the answers from attestation.answersClaim, and a release without that claim is refused naming the option', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    const named = client({
      attestation: { issuer: service.issuer, audience: service.audience, answersClaim: 'answers' },
    });
    await expect(named.release(id)).resolves.toMatchObject({ status: 'released' });
    const elsewhere = client({
      attestation: { issuer: service.issuer, audience: service.audience, answersClaim: 'released_values' },
    });
    const error = await elsewhere.release(id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'attestation_rejected' });
    expect((error as Error).message).toMatch(/"released_values", as attestation\.answersClaim says/);
  });

  it("rejects another request's genuine release served under this request id", async () => {
    const id = await service.createDataRequest();
    const other = await service.createDataRequest();
    await service.release(id);
    const otherRelease = await service.release(other);
    service.forgeRelease(id, otherRelease.attestation as string);
    await expect(client().release(id)).rejects.toMatchObject({ code: 'attestation_rejected' });
  });

  it('accepts the genuine claims re-signed by the service key (the control of the cases below)', async () => {
    const id = await service.createDataRequest();
    const released = await service.release(id);
    const payload = (released.attestation as string).split('.')[1] as string;
    service.forgeRelease(id, await service.signToken(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))));
    await expect(client().release(id)).resolves.toMatchObject({ status: 'released' });
  });

  it.each([
    ['without the released answers', { answers: undefined }],
    ['naming another request_id', { request_id: 'dr_other' }],
    ['naming another stream_id', { stream_id: 'dr_other' }],
    ['from another issuer', { iss: 'https://evil.example' }],
    ['for another audience', { aud: 'another-merchant' }],
    ['issued in the future', { iat: Math.floor(Date.now() / 1000) + 3600, exp: Math.floor(Date.now() / 1000) + 4200 }],
  ])('rejects a genuinely signed release %s', async (_what, change) => {
    const id = await service.createDataRequest();
    const released = await service.release(id);
    const payload = (released.attestation as string).split('.')[1] as string;
    const claims: Record<string, unknown> = {
      ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
      ...change,
    };
    for (const [name, value] of Object.entries(change)) if (value === undefined) delete claims[name];
    service.forgeRelease(id, await service.signToken(claims));
    await expect(client().release(id)).rejects.toMatchObject({ code: 'attestation_rejected' });
  });

  it('still verifies releases signed before a key rotation while the old key stays published', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    await service.rotateKeys();
    await expect(client().release(id)).resolves.toMatchObject({ status: 'released' });
  });

  it('throws for a 404 with another code (an unknown request), instead of calling it not released', async () => {
    await expect(client().release('dr_does_not_exist')).rejects.toMatchObject({
      status: 404,
      code: 'request_not_found',
    });
  });

  it('without attestation options, explains what to pass', async () => {
    const bare = client({ attestation: undefined });
    await expect(bare.release('dr_1')).rejects.toThrow(/attestation: \{ issuer, audience \}/);
  });
});

describe('deliveries, events, redeliver, reactivate', () => {
  it('lists delivery attempts with what the merchant host answered', async () => {
    const endpoint = await startStatusEndpoint(500);
    const delivering = await startKybService({
      timeScale: 1e-5,
      retry: { maxAttempts: 2 },
      endpoint: { url: endpoint.url },
    });
    try {
      const id = await delivering.createDataRequest();
      await delivering.idle();
      const deliveries = await createKybClient({ baseUrl: delivering.baseUrl, apiKey: delivering.apiKey }).deliveries(
        id,
      );
      expect(deliveries).toMatchObject([
        {
          seq: 0,
          attempt: 1,
          status: 500,
          event: 'kyb.data_request.pending_approval',
          attempted_at: expect.any(Number),
        },
        { seq: 0, attempt: 2, status: 500, duration_ms: expect.any(Number) },
      ]);
    } finally {
      await delivering.stop();
      await endpoint.close();
    }
  });

  it('pages through a stream of 250 events in seq order', async () => {
    const id = await service.createDataRequest();
    for (let index = 1; index < 250; index++)
      await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
    const events = await collect(client({ pageSize: 100 }).events(id));
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 250 }, (_, seq) => seq));
    const pages = calls().filter((call) => call.path.includes('/events'));
    expect(pages.map((call) => new URL(call.path, 'http://x').searchParams.get('after_seq'))).toEqual([
      '-1',
      '99',
      '199',
    ]);
  });

  it('starts after the given seq', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    const events = await collect(client().events(id, { afterSeq: 0 }));
    expect(events.map((event) => [event.seq, event.event])).toEqual([[1, 'kyb.data_request.released']]);
    expect(events[0]?.attestation).toEqual(expect.any(String));
  });

  it('keeps unknown fields of events', async () => {
    const id = await service.createDataRequest();
    const [event] = await collect(client().events(id));
    expect(event).toMatchObject({ api_version: expect.any(String), timestamp: expect.any(Number) });
  });

  it('redeliver queues the events again and says how many', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    await expect(client().redeliver(id)).resolves.toMatchObject({ queued: 2 });
    expect(service.pending(id)).toBe(4);
  });

  it('reactivate clears the quarantine, and the held backlog is delivered', async () => {
    const endpoint = await startStatusEndpoint(500);
    const quarantining = await startKybService({
      quarantineAfter: 2,
      timeScale: 1e-5,
      endpoint: { url: endpoint.url },
    });
    try {
      const id = await quarantining.createDataRequest();
      await quarantining.idle();
      expect(quarantining.quarantined).toBe(true);
      endpoint.status = 200;
      const reactivating = createKybClient({ baseUrl: quarantining.baseUrl, apiKey: quarantining.apiKey });
      await expect(reactivating.reactivate()).resolves.toMatchObject({ reactivated: true });
      await quarantining.idle();
      expect(quarantining.attempts(id).map((attempt) => attempt.status)).toEqual([500, 500, 200]);
    } finally {
      await quarantining.stop();
      await endpoint.close();
    }
  });

  it('a 402 insufficient_credit is an InsufficientCreditError', async () => {
    // Creation is not part of the spec's API; a 402 from any call maps the same way.
    service.failNextApiCalls(1, { status: 402, code: 'insufficient_credit' });
    const error = await client()
      .reactivate()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InsufficientCreditError);
    expect(error).toMatchObject({ status: 402, code: 'insufficient_credit' });
  });
});

// The spec shows neither the bodies nor the paging of these lists (4.2): the same reads over every shape the local
// service can answer in (see API_SHAPE_VARIANTS), each read whole.
describe.each(Object.entries(API_SHAPE_VARIANTS))('lists over the API shape "%s"', (_name, apiShape) => {
  it('deliveries: every attempt of a many-page log, with acknowledged judged from the entry as sent', async () => {
    const endpoint = await startStatusEndpoint(500);
    const shaped = await startKybService({
      timeScale: 1e-5,
      retry: { maxAttempts: 3 },
      endpoint: { url: endpoint.url },
      apiShape,
    });
    try {
      const id = await shaped.createDataRequest();
      await shaped.idle();
      endpoint.status = 204;
      await shaped.emit(id, 'kyb.data_request.pending_approval');
      await shaped.idle();
      const log = await createKybClient({ baseUrl: shaped.baseUrl, apiKey: shaped.apiKey }).deliveries(id);
      const seen = log.map((entry) => [entry.seq, entry.acknowledged]).sort();
      expect(seen).toEqual([
        [0, false],
        [0, false],
        [0, false],
        [1, true],
      ]);
      expect(new Set(log.map((entry) => entry.event_id)).size).toBe(2);
    } finally {
      await shaped.stop();
      await endpoint.close();
    }
  });

  it('events: every event, in seq order, two a page', async () => {
    service.apiShape = apiShape;
    try {
      const id = await service.createDataRequest();
      for (let index = 0; index < 4; index++)
        await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
      await service.release(id);
      const events = await collect(client({ pageSize: 2 }).events(id, { afterSeq: 0 }));
      expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(typeof events[4]!.attestation).toBe('string');
      expect(events.slice(0, 4).every((event) => !('attestation' in event))).toBe(true);
    } finally {
      service.apiShape = {};
    }
  });
});

describe('per-request paths', () => {
  it("reads a signature request's lists under the signature-request path, a data request's under the data-request path", async () => {
    const sr = await service.createSignatureRequest();
    const dr = await service.createDataRequest();
    await expect(client().deliveries(sr)).resolves.toEqual(expect.any(Array));
    await expect(collect(client().events(sr))).resolves.toHaveLength(1);
    await client().deliveries(dr);
    expect(calls().map((call) => `${call.status} ${call.path.split('?')[0]}`)).toEqual([
      `200 /api/v1/kyb/signature-requests/${sr}/deliveries`,
      `200 /api/v1/kyb/signature-requests/${sr}/events`,
      `200 /api/v1/kyb/data-requests/${dr}/deliveries`,
    ]);
  });

  it('fills {id} in the path templates given, and kind picks the template when the id does not tell', async () => {
    const custom = await startKybService({
      requestPrefix: '/v2/requests/data',
      signatureRequestPrefix: '/v2/requests/signatures',
    });
    try {
      const sr = await custom.createSignatureRequest({ id: 'sig_1' });
      const dr = await custom.createDataRequest({ id: 'dr_2' });
      const api = createKybClient({
        baseUrl: custom.baseUrl,
        apiKey: custom.apiKey,
        dataRequestPath: '/v2/requests/data/{id}',
        signatureRequestPath: '/v2/requests/signatures/{id}/',
      });
      await expect(api.deliveries(sr, { kind: 'signature_request' })).resolves.toEqual(expect.any(Array));
      await expect(api.redeliver(dr)).resolves.toMatchObject({ queued: 1 });
      await expect(api.deliveries(sr)).rejects.toMatchObject({ status: 404, code: 'request_not_found' });
      expect(custom.apiCalls.map((call) => `${call.status} ${call.path}`)).toEqual([
        '200 /v2/requests/signatures/sig_1/deliveries',
        '202 /v2/requests/data/dr_2/redeliver',
        '404 /v2/requests/data/sig_1/deliveries',
      ]);
    } finally {
      await custom.stop();
    }
  });

  it('requestPrefix still sets the path of every kind of request', async () => {
    const sr = await service.createSignatureRequest();
    await client({ requestPrefix: '/api/v1/kyb/signature-requests/' }).deliveries(sr);
    expect(calls().map((call) => call.path)).toEqual([`/api/v1/kyb/signature-requests/${sr}/deliveries`]);
  });

  it.each([
    ['no {id}', { dataRequestPath: '/api/v1/kyb/data-requests' }],
    ['{id} twice', { signatureRequestPath: '/x/{id}/{id}' }],
    ['{id} inside a segment', { dataRequestPath: '/x/req-{id}' }],
    ['a query', { dataRequestPath: '/x/{id}?a=1' }],
    ['no leading slash', { dataRequestPath: 'x/{id}' }],
    ['an unknown kind', {}, { kind: 'data' }],
  ] as [string, Partial<KybClientOptions>, object?][])(
    'refuses a path template with %s: config_invalid',
    async (_what, options, call) => {
      const attempt = async () => client(options).deliveries('dr_1', call as never);
      await expect(attempt()).rejects.toMatchObject({ code: 'config_invalid' });
    },
  );
});

describe('request(): calls the spec does not show', () => {
  it('creates a data request with the API key, and a 402 is an InsufficientCreditError with the amounts the answer gave', async () => {
    const billed = await startKybService({ creditCents: 600 });
    try {
      const api = createKybClient({ baseUrl: billed.baseUrl, apiKey: billed.apiKey });
      const created = await api.request('POST', '/api/v1/kyb/data-requests', { body: { price_cents: 500 } });
      expect(created).toMatchObject({
        status: 201,
        body: { id: expect.stringMatching(/^dr_/), state: 'pending_approval' },
      });
      expect(billed.request((created.body as { id: string }).id)?.state).toBe('pending_approval');
      const error = await api
        .request('post', '/api/v1/kyb/data-requests', { body: { price_cents: 500 } })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InsufficientCreditError);
      expect(error).toMatchObject({
        status: 402,
        code: 'insufficient_credit',
        requiredCents: 500,
        availableCents: 100,
        shortfallCents: 400,
        currency: 'USD',
      });
      expect((error as Error).message).toMatch(/400 cents short, USD/);
      expect(billed.apiCalls.map((call) => [call.method, call.status, call.authorized])).toEqual([
        ['POST', 201, true],
        ['POST', 402, true],
      ]);
    } finally {
      await billed.stop();
    }
  });

  it('retries a GET, and a POST only with retry: true', async () => {
    service.failNextApiCalls(1, { status: 503 });
    await expect(client().request('GET', '/api/v1/kyb/data-requests/none/deliveries')).rejects.toMatchObject({
      status: 404,
    });
    expect(calls().map((call) => call.status)).toEqual([503, 404]);
    service.failNextApiCalls(1, { status: 503 });
    await expect(client().request('POST', '/api/v1/kyb/webhook-endpoint/reactivate')).rejects.toMatchObject({
      status: 503,
    });
    service.failNextApiCalls(1, { status: 503 });
    await expect(
      client().request('POST', '/api/v1/kyb/webhook-endpoint/reactivate', { retry: true }),
    ).resolves.toMatchObject({ status: 200, body: { reactivated: true } });
  });

  it('sends query parameters', async () => {
    const id = await service.createDataRequest();
    const answer = await client().request('GET', `/api/v1/kyb/data-requests/${id}/events`, {
      query: { after_seq: -1, limit: 1 },
    });
    expect(answer).toMatchObject({ status: 200, body: { events: [{ seq: 0 }] } });
    expect(calls().map((call) => call.path)).toEqual([`/api/v1/kyb/data-requests/${id}/events?after_seq=-1&limit=1`]);
  });

  it.each([
    ['another host', '//evil.example/x'],
    ['a full URL', 'https://evil.example/x'],
    ['a parent segment', '/api/../../x'],
    ['an encoded parent segment', '/api/%2e%2e/x'],
    ['a query in the path', '/api?x=1'],
    ['whitespace', '/api/ x'],
  ])('refuses a path with %s: config_invalid, nothing sent', async (_what, path) => {
    await expect(client().request('GET', path)).rejects.toMatchObject({ code: 'config_invalid' });
    expect(calls()).toHaveLength(0);
  });
});

describe('retries and timeouts', () => {
  // How long the client waits is read on fake timers (setTimeout only: the sockets to the service stay real), never
  // on the wall clock, which a loaded machine only makes longer.
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Yields to the real sockets (setImmediate is never faked) until `done` holds. */
  async function until(done: () => boolean) {
    while (!done()) await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * The real fetch, counting the attempts made and the answers in. Each answer is read whole before the client sees
   * it: once `answered` counts one, the client's next steps (its retry wait among them) need no I/O.
   */
  function watchedFetch() {
    const seen = { made: 0, answered: 0 };
    const watched: typeof fetch = async (input, init) => {
      seen.made++;
      const response = await fetch(input, init);
      const body = await response.arrayBuffer();
      seen.answered++;
      return new Response(body.byteLength === 0 ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
    return { seen, fetch: watched };
  }

  it('retries a GET after a 503 and waits the Retry-After it was told', async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(1, { status: 503, retryAfter: '1' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { seen, fetch } = watchedFetch();
    const answer = client({ fetch }).deliveries(id);
    await until(() => seen.answered === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen.made, 'no retry 999 ms on').toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.made, 'the retry 1000 ms on').toBe(2);
    await expect(answer).resolves.toEqual([]);
    expect(calls().map((call) => call.status)).toEqual([503, 200]);
  });

  it('gives up at once when Retry-After is longer than the cap, and reports the wait', async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(1, { status: 503, retryAfter: '3600' });
    await expect(client().deliveries(id)).rejects.toMatchObject({ status: 503, retryAfterMs: 3_600_000, attempts: 1 });
  });

  it('retries 5xx and 429 up to maxRetries, then throws with the last status', async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(3, { status: 429 });
    await expect(client({ retry: { maxRetries: 2, baseDelayMs: 1 } }).deliveries(id)).rejects.toMatchObject({
      status: 429,
      attempts: 3,
    });
  });

  it('does not retry a POST unless the call opts in', async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(1, { status: 503 });
    await expect(client().redeliver(id)).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(service.pending(id)).toBe(1);
    service.failNextApiCalls(1, { status: 503 });
    await expect(client().redeliver(id, { retry: true })).resolves.toMatchObject({ queued: 1 });
  });

  it('times out a slow answer, retries it, and succeeds', async () => {
    const id = await service.createDataRequest();
    // Generous against a loaded machine: the retry must fit in the timeout, the slow answer must not.
    service.failNextApiCalls(1, { delayMs: 1500 });
    await expect(client({ timeoutMs: 500 }).deliveries(id)).resolves.toEqual([]);
  });

  it('a timeout that persists ends as code timeout with no status', async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(2, { delayMs: 300 });
    await expect(
      client({ timeoutMs: 50, retry: { maxRetries: 1, baseDelayMs: 1 } }).deliveries(id),
    ).rejects.toMatchObject({
      status: null,
      code: 'timeout',
      attempts: 2,
    });
  });

  it("the caller's signal aborts the call, including a retry wait", async () => {
    const id = await service.createDataRequest();
    service.failNextApiCalls(1, { status: 503, retryAfter: '10' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { seen, fetch } = watchedFetch();
    const controller = new AbortController();
    let outcome: unknown = 'pending';
    void client({ fetch })
      .deliveries(id, { signal: controller.signal })
      .then(
        () => (outcome = 'resolved'),
        (error: unknown) => (outcome = error),
      );
    await until(() => seen.answered === 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(outcome).toBe('pending');
    controller.abort();
    // No time passes from here: only the abort can end the 10 s wait.
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toBeInstanceOf(KybApiError);
    expect(outcome).toMatchObject({ code: 'aborted', status: null, attempts: 1 });
    expect(seen.made).toBe(1);
    expect(calls().map((call) => call.status)).toEqual([503]);
  });

  it('a network error is retried for GET and ends as network_error', async () => {
    const closed = createKybClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'k',
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    await expect(closed.deliveries('dr_1')).rejects.toMatchObject({ code: 'network_error', status: null, attempts: 2 });
  });
});

describe('options', () => {
  it('uses the configured request prefix', async () => {
    const custom = await startKybService({ requestPrefix: '/api/v2/requests' });
    try {
      const id = await custom.createDataRequest();
      const prefixed = createKybClient({
        baseUrl: custom.baseUrl,
        apiKey: custom.apiKey,
        requestPrefix: '/api/v2/requests/',
      });
      await expect(collect(prefixed.events(id))).resolves.toHaveLength(1);
      expect(custom.apiCalls[0]?.path).toMatch(/^\/api\/v2\/requests\//);
    } finally {
      await custom.stop();
    }
  });

  it.each([
    [{ apiKey: '' }, /`apiKey` is empty: set it to the API key from the KYB dashboard/],
    [{ apiKey: undefined }, /`apiKey` is missing: set it to the API key/],
    [
      { apiKey: 'kyb_live_key\n' },
      /`apiKey` has leading or trailing whitespace \(a line break from a file\?\): trim it/,
    ],
    [{ apiKey: 'kyb_live_\u0000key' }, /`apiKey` contains characters a header cannot carry/],
    [{ baseUrl: 'not a url' }, /`baseUrl` is not an absolute URL/],
    [{ baseUrl: 'localhost:8080' }, /`baseUrl` must be an https: URL/],
    [
      { baseUrl: 'http://api.kyb.example.com' },
      /`baseUrl` uses http: on a host that is not loopback, which would send the API key in clear text/,
    ],
    [{ baseUrl: 'https://user:pw@api.kyb.example.com' }, /`baseUrl` must not carry credentials/],
    [{ baseUrl: 'https://api.kyb.example.com/?tenant=1' }, /`baseUrl` must not have a query or fragment/],
    [{ timeoutMs: Number.POSITIVE_INFINITY }, /`timeoutMs` must be a positive finite number of milliseconds/],
    [{ timeoutMs: 3_000_000_000 }, /`timeoutMs` must be at most 2147483647 ms/],
    [{ retry: { maxRetries: -1 } }, /`retry.maxRetries` must be a whole number of at least 0/],
    [{ retry: { retries: 2 } }, /`retry.retries` is not an option.*maxRetries/],
    [{ pageSize: 0 }, /`pageSize` must be a positive whole number of events/],
    [{ maxResponseBytes: 1.5 }, /`maxResponseBytes` must be a positive whole number of bytes/],
    [{ attestation: { audience: 'a' } }, /attestation.issuer is required/],
  ])('rejects bad options %j at creation with config_invalid and the fix', (overrides, message) => {
    const create = () =>
      createKybClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', ...overrides } as KybClientOptions);
    expect(create).toThrow(message);
    expect(create).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  });

  it('never repeats the API key or URL credentials in a config_invalid message', () => {
    for (const overrides of [
      { apiKey: 'sk_live_SECRET\n' },
      { baseUrl: 'https://user:SECRETPW@api.kyb.example.com' },
    ]) {
      const error = (() => {
        try {
          createKybClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', ...overrides });
        } catch (caught) {
          return caught as Error;
        }
      })();
      expect(error?.message).toMatch(/config_invalid|createKybClient/);
      expect(inspect(error, { depth: 5 })).not.toMatch(/SECRET/);
    }
  });

  it('accepts an inline attestation.jwks, without a jwksUrl of its own', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    const jwks = await (await fetch(`${service.baseUrl}/.well-known/kyb-jwks.json`)).json();
    const inline = client({ attestation: { issuer: service.issuer, audience: service.audience, jwks } });
    await expect(inline.release(id)).resolves.toMatchObject({ status: 'released' });
  });

  it.each([
    ['a non-finite timeoutMs', { timeoutMs: Number.NaN }, /`timeoutMs` must be a positive finite number/],
    ['retry that is not a boolean', { retry: 'yes' }, /`retry` must be true or false/],
    ['a misspelt option', { timeout: 5 }, /`timeout` is not an option.*timeoutMs/],
  ])('refuses call options with %s as config_invalid, before any request', async (_name, call, message) => {
    const before = service.apiCalls.length;
    const id = await service.createDataRequest();
    await expect(client().deliveries(id, call as never)).rejects.toThrow(message);
    await expect(collect(client().events(id, { afterSeq: -2 }))).rejects.toThrow(
      /`afterSeq` must be a whole number of seq of at least -1/,
    );
    expect(service.apiCalls.length).toBe(before);
  });

  it.each(['', '.', '..'])(
    'refuses the request id %j with invalid_request_id, before any request',
    async (requestId) => {
      const before = service.apiCalls.length;
      for (const call of [
        () => client().release(requestId),
        () => client().deliveries(requestId),
        () => collect(client().events(requestId)),
        () => client().redeliver(requestId),
      ]) {
        await expect(call()).rejects.toMatchObject({
          name: 'KybApiError',
          code: 'invalid_request_id',
          status: null,
          attempts: 0,
        });
      }
      expect(service.apiCalls.length).toBe(before);
    },
  );
});

describe('what a broken or hostile answer cannot do', () => {
  const KEY = 'sk_live_SECRET123';

  /** A raw API on 127.0.0.1 that answers every call with `answer`, and records the calls it got. */
  async function rawApi(
    answer: (request: IncomingMessage, response: ServerResponse) => void,
    overrides: Partial<KybClientOptions> = {},
  ) {
    const paths: string[] = [];
    const server = createServer((request, response) => {
      paths.push(`${request.method} ${request.url}`);
      answer(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as { port: number };
    const api = createKybClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      retry: { maxRetries: 1, baseDelayMs: 1 },
      ...overrides,
    });
    return {
      api,
      paths,
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  function json(status: number, body: unknown) {
    return (_request: IncomingMessage, response: ServerResponse) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
  }

  async function failure(promise: Promise<unknown>): Promise<KybApiError> {
    const caught = await promise.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(caught).toBeInstanceOf(KybApiError);
    return caught as KybApiError;
  }

  it('stops reading a 2xx body past maxResponseBytes: response_too_large, not retried', async () => {
    const entry = `${JSON.stringify({ event_id: 'x', seq: 1 })},`.repeat(2_000);
    const raw = await rawApi(
      (_request, response) => {
        // Streamed without a Content-Length, so only reading can find it too large.
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('[');
        let sent = 0;
        const more = () => {
          while (sent < 400 && response.write(entry)) sent++;
          if (sent < 400) response.once('drain', more);
          else response.end('{"event_id":"x","seq":1}]');
        };
        more();
      },
      { maxResponseBytes: 1024 * 1024 },
    );
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'response_too_large', status: 200, attempts: 1 });
      expect(error.message).toMatch(
        /over maxResponseBytes \(1048576 bytes\)\. Raise the client's maxResponseBytes option/,
      );
      expect(raw.paths).toHaveLength(1);
    } finally {
      await raw.close();
    }
  });

  it('stops at once when a body passes maxResponseBytes, reading no further chunk and cancelling the stream', async () => {
    let pulls = 0;
    let cancelled = false;
    const trickle = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            pulls += 1;
            if (pulls > 1) await new Promise((resolve) => setTimeout(resolve, 50));
            controller.enqueue(new Uint8Array(pulls === 1 ? 2048 : 10));
          },
          cancel() {
            cancelled = true;
          },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    const capped = createKybClient({
      baseUrl: 'https://api.kyb.example.com',
      apiKey: KEY,
      fetch: trickle,
      maxResponseBytes: 1024,
    });
    await expect(failure(capped.deliveries('dr_1'))).resolves.toMatchObject({ code: 'response_too_large' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled).toBe(true);
    // The stream may have queued one chunk ahead; a drain (as a server does for a 413) would have pulled ~100 in 5 s.
    expect(pulls).toBeLessThanOrEqual(2);
  });

  it('reads a large error body only for its code: the status decides, nothing is kept', async () => {
    const raw = await rawApi(json(400, { code: 'bad_request', padding: 'x'.repeat(200_000) }));
    try {
      // Past 64 KiB the error body is dropped, so its code is unread: the status's own code stands.
      await expect(failure(raw.api.deliveries('dr_1'))).resolves.toMatchObject({ status: 400, code: 'http_error' });
    } finally {
      await raw.close();
    }
  });

  it("does not copy the service's message into the error's code, message or JSON", async () => {
    const raw = await rawApi(json(400, { error: 'Request for jane@example.com is invalid' }));
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ status: 400, code: 'http_error' });
      expect(`${error.message} ${JSON.stringify(error)} ${inspect(error, { depth: 5 })}`).not.toMatch(
        /jane@example\.com/,
      );
    } finally {
      await raw.close();
    }
  });

  it('names a 404 without a code request_not_found on the per-request calls', async () => {
    const raw = await rawApi(json(404, ''));
    try {
      await expect(failure(raw.api.deliveries('dr_1'))).resolves.toMatchObject({
        status: 404,
        code: 'request_not_found',
      });
      await expect(failure(raw.api.reactivate())).resolves.toMatchObject({ status: 404, code: 'http_error' });
    } finally {
      await raw.close();
    }
  });

  it('a 2xx list that is not JSON is invalid_response without quoting the body; redeliver and reactivate are done', async () => {
    const raw = await rawApi((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('sk_live_abc <html>PRIVATE-BODY</html>');
    });
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'invalid_response', status: 200, attempts: 1 });
      expect(inspect(error, { depth: 5 })).not.toMatch(/PRIVATE-BODY|sk_live/);
      // Their bodies are not shown (spec 4.2): the 2xx is the answer, and nothing of the body is kept.
      await expect(raw.api.redeliver('dr_1')).resolves.toStrictEqual({ queued: undefined });
      await expect(raw.api.reactivate()).resolves.toStrictEqual({ reactivated: true });
    } finally {
      await raw.close();
    }
  });

  it('a network error keeps its system code in the message, and no platform error as its cause', async () => {
    // A port that was just free: nothing listens there. (Port 9 would be fetch's "bad port", refused before connecting.)
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const closed = createKybClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY, retry: { maxRetries: 0 } });
    const error = await failure(closed.deliveries('dr_1'));
    expect(error).toMatchObject({ code: 'network_error', status: null, attempts: 1 });
    expect(error.message).toMatch(/network error: ECONNREFUSED/);
    expect(error.cause).toBeUndefined();
  });

  it("refuses an event of another stream in the request's events", async () => {
    const event = (seq: number, stream_id: string) => ({
      event: 'kyb.data_request.refused',
      event_id: `e${seq}`,
      stream_id,
      seq,
      data: {},
    });
    const raw = await rawApi(json(200, { events: [event(1, 'dr_mine'), event(2, 'dr_other')], has_more: false }));
    try {
      const seen: number[] = [];
      const error = await failure(
        (async () => {
          for await (const item of raw.api.events('dr_mine')) seen.push(item.seq);
        })(),
      );
      expect(error).toMatchObject({ code: 'invalid_response' });
      expect(error.message).toMatch(/an event of another stream \(seq 2\)/);
      expect(seen).toEqual([1]);
    } finally {
      await raw.close();
    }
  });

  it('follows a bare list to its next page by its Link header, not only by has_more', async () => {
    const entry = (seq: number) => ({ event_id: `e${seq}`, seq, status: 200 });
    const raw = await rawApi((request, response) => {
      const second = request.url?.includes('page=2');
      response.writeHead(200, {
        'content-type': 'application/json',
        ...(second ? {} : { link: '</api/v1/kyb/data-requests/dr_1/deliveries?page=2>; rel="next"' }),
      });
      response.end(JSON.stringify(second ? [entry(2)] : [entry(0), entry(1)]));
    });
    try {
      await expect(raw.api.deliveries('dr_1')).resolves.toMatchObject([{ seq: 0 }, { seq: 1 }, { seq: 2 }]);
      expect(raw.paths).toEqual([
        'GET /api/v1/kyb/data-requests/dr_1/deliveries',
        'GET /api/v1/kyb/data-requests/dr_1/deliveries?page=2',
      ]);
    } finally {
      await raw.close();
    }
  });

  it.each([
    ['a next URL', { deliveries: [{ event_id: 'e', seq: 0 }], next: 'http://127.0.0.2:9/steal' }, {}],
    [
      'a Link header',
      { deliveries: [{ event_id: 'e', seq: 0 }] },
      { link: '<https://evil.example/steal>; rel="next"' },
    ],
    ['a protocol-relative next', { deliveries: [{ event_id: 'e', seq: 0 }], next: '//evil.example/steal' }, {}],
  ])('never follows %s to another origin (the API key would go with it)', async (_what, body, headers) => {
    const raw = await rawApi((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    });
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'invalid_response' });
      expect(error.message).toMatch(/another origin/);
      expect(raw.paths).toHaveLength(1);
    } finally {
      await raw.close();
    }
  });

  it('stops at maxPages with too_many_pages instead of returning part of the log', async () => {
    let page = 0;
    const raw = await rawApi(
      (_request, response) => {
        page += 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ data: [{ event_id: `e${page}`, seq: page }], has_more: true, next_cursor: `c${page}` }),
        );
      },
      { paging: { maxPages: 3 } },
    );
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'too_many_pages' });
      expect(error.message).toMatch(/more than 3 pages \(paging\.maxPages\)/);
      expect(raw.paths).toEqual([
        'GET /api/v1/kyb/data-requests/dr_1/deliveries',
        'GET /api/v1/kyb/data-requests/dr_1/deliveries?cursor=c1',
        'GET /api/v1/kyb/data-requests/dr_1/deliveries?cursor=c2',
      ]);
    } finally {
      await raw.close();
    }
  });

  it.each([
    [
      'a next page that points back at one read',
      { data: [{ event_id: 'e', seq: 0 }], has_more: true, next_cursor: 'same' },
      /a page already read/,
    ],
    [
      'has_more with no next page',
      { deliveries: [{ event_id: 'e', seq: 0 }], has_more: true },
      /says has_more but names no next page/,
    ],
  ])('refuses %s: invalid_response, never a silently short log', async (_what, body, message) => {
    const raw = await rawApi(json(200, body));
    try {
      const error = await failure(raw.api.deliveries('dr_1'));
      expect(error).toMatchObject({ code: 'invalid_response' });
      expect(error.message).toMatch(message);
    } finally {
      await raw.close();
    }
  });

  it('an empty page that says has_more is invalid_response, not the end of the stream', async () => {
    const raw = await rawApi(json(200, { events: [], has_more: true }));
    try {
      const error = await failure(collect(raw.api.events('dr_1')));
      expect(error.message).toMatch(/an empty page that says has_more/);
    } finally {
      await raw.close();
    }
  });

  it('retries a 520 (a CDN in front of the service) but not a 501', async () => {
    const answers = [520, 200];
    const raw = await rawApi((request, response) => json(answers.shift() ?? 200, '[]')(request, response));
    try {
      await expect(raw.api.deliveries('dr_1')).resolves.toEqual([]);
      expect(raw.paths).toHaveLength(2);
      answers.push(501);
      await expect(failure(raw.api.deliveries('dr_1'))).resolves.toMatchObject({ status: 501, attempts: 1 });
    } finally {
      await raw.close();
    }
  });
});

async function startStatusEndpoint(status: number): Promise<{ url: string; status: number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(endpoint.status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  const endpoint = {
    status,
    url: `http://127.0.0.1:${port}/webhooks/kyb`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return endpoint;
}
