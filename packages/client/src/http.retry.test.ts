import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKybClient, KybApiError, type KybClientOptions } from './index.js';

// When a call is retried, how long it waits, and how a caller's abort ends it: the `fetch` option hands back real
// Responses and records when each attempt was made.
const BASE = 'http://127.0.0.1:9';

function client(
  answer: (attempt: number, init: RequestInit) => Response | Promise<Response>,
  overrides: Partial<KybClientOptions> = {},
) {
  const at: number[] = [];
  const kyb = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (_input, init) => {
      at.push(performance.now());
      return answer(at.length, init ?? {});
    },
    ...overrides,
  });
  return { kyb, at };
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    new Response(code === 204 ? null : `{"status":${code}}`, { status: code, headers });

async function failure(promise: Promise<unknown>): Promise<KybApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(KybApiError);
  return error as KybApiError;
}

/** Never answers; rejects with the abort reason once its signal aborts (as fetch does). */
const hanging = (_attempt: number, init: RequestInit) =>
  new Promise<Response>((_resolve, reject) => {
    init.signal!.addEventListener('abort', () => reject(init.signal!.reason as Error), { once: true });
  });

describe('which answers are retried', () => {
  it.each([408, 429, 500, 502, 503, 504, 520, 599])(
    'a GET answered %i is asked again, up to maxRetries',
    async (code) => {
      const { kyb, at } = client(status(code));
      const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
      expect(error).toMatchObject({ status: code, attempts: 4 });
      expect(at).toHaveLength(4);
    },
  );

  it.each([400, 401, 404, 409, 501, 505])('a GET answered %i is not asked again', async (code) => {
    const { kyb, at } = client(status(code));
    await expect(kyb.request('GET', '/api/v1/kyb/things')).rejects.toMatchObject({ status: code, attempts: 1 });
    expect(at).toHaveLength(1);
  });

  it('a HEAD is retried like a GET, a POST or DELETE only when the call opts in', async () => {
    const head = client((attempt) => (attempt < 3 ? status(503)() : status(204)()));
    await expect(head.kyb.request('HEAD', '/api/v1/kyb/things')).resolves.toMatchObject({ status: 204 });
    expect(head.at).toHaveLength(3);
    const del = client(status(503));
    await expect(del.kyb.request('DELETE', '/api/v1/kyb/things/1')).rejects.toMatchObject({ attempts: 1 });
    const opted = client((attempt) => (attempt < 2 ? status(503)() : status(204)()));
    await expect(opted.kyb.request('delete', '/api/v1/kyb/things/1', { retry: true })).resolves.toMatchObject({
      status: 204,
    });
    expect(opted.at).toHaveLength(2);
  });
});

describe('how long a retry waits', () => {
  it('backs off exponentially, each wait drawn between half and all of the backoff', async () => {
    const { kyb, at } = client(status(503), {
      retry: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1000 },
      random: () => 0.99,
    });
    await failure(kyb.request('GET', '/api/v1/kyb/things'));
    const [first, second] = [at[1]! - at[0]!, at[2]! - at[1]!];
    // 50 + 0.99 × 50 ms, then 100 + 0.99 × 100 ms.
    expect(first).toBeGreaterThanOrEqual(97);
    expect(first).toBeLessThan(170);
    expect(second).toBeGreaterThanOrEqual(196);
    expect(second).toBeLessThan(290);
  });

  it('waits half the backoff when the draw is 0, and never past maxDelayMs', async () => {
    const { kyb, at } = client(status(503), {
      retry: { maxRetries: 3, baseDelayMs: 120, maxDelayMs: 160 },
      random: () => 0,
    });
    await failure(kyb.request('GET', '/api/v1/kyb/things'));
    const gaps = at.slice(1).map((time, index) => time - at[index]!);
    // 60, then min(240, 160) / 2 = 80 twice.
    expect(gaps[0]).toBeGreaterThanOrEqual(58);
    expect(gaps[0]).toBeLessThan(75);
    for (const gap of gaps.slice(1)) {
      expect(gap).toBeGreaterThanOrEqual(78);
      expect(gap).toBeLessThan(150);
    }
  });

  it('waits out a Retry-After exactly at maxRetryAfterMs, and gives up on a longer one', async () => {
    const waited = client((attempt) => (attempt === 1 ? status(503, { 'retry-after': '1' })() : status(204)()), {
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1000 },
    });
    await expect(waited.kyb.request('GET', '/api/v1/kyb/things')).resolves.toMatchObject({ status: 204 });
    expect(waited.at[1]! - waited.at[0]!).toBeGreaterThanOrEqual(990);

    const refused = client(status(429, { 'retry-after': '2' }), {
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1000 },
    });
    const error = await failure(refused.kyb.request('GET', '/api/v1/kyb/things'));
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', attempts: 1, retryAfterMs: 2000 });
  });
});

describe("the caller's abort", () => {
  it('an aborted signal ends the call before any attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    controller.abort(reason);
    const { kyb, at } = client(status(204));
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal }));
    expect(error).toMatchObject({ status: null, code: 'aborted', attempts: 0, cause: reason });
    expect(error.message).toBe('GET /api/v1/kyb/things was aborted by the caller.');
    expect(at).toHaveLength(0);
  });

  it('ends an attempt in flight at once, well before its timeout, and a POST too', async () => {
    for (const call of [
      (kyb: ReturnType<typeof client>['kyb'], signal: AbortSignal) =>
        kyb.request('GET', '/api/v1/kyb/things', { signal }),
      (kyb: ReturnType<typeof client>['kyb'], signal: AbortSignal) => kyb.reactivate({ signal }),
    ]) {
      const controller = new AbortController();
      const { kyb, at } = client(hanging, { timeoutMs: 3000, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
      setTimeout(() => controller.abort(), 30);
      const started = performance.now();
      const error = await failure(call(kyb, controller.signal));
      expect(performance.now() - started).toBeLessThan(1500);
      expect(error).toMatchObject({ status: null, code: 'aborted', attempts: 1 });
      expect(at).toHaveLength(1);
    }
  });

  it('ends a retry wait, saying how many attempts were made', async () => {
    const controller = new AbortController();
    const { kyb, at } = client(status(503, { 'retry-after': '20' }), {
      retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 60_000 },
    });
    setTimeout(() => controller.abort(), 30);
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal }));
    expect(error).toMatchObject({ code: 'aborted', attempts: 1 });
    expect(error.message).toBe('GET /api/v1/kyb/things was aborted by the caller.');
    expect(at).toHaveLength(1);
  });

  it('leaves no listener on a signal shared by many calls, retried or not', async () => {
    const controller = new AbortController();
    const { kyb } = client((attempt) => (attempt % 2 === 1 ? status(503)() : status(204)()));
    for (let i = 0; i < 12; i++) await kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('what a call leaves behind', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // A timer left pending holds a Node process open until it fires: a script would hang for the attempt's timeoutMs
  // or the rest of a Retry-After after its last call ended.
  it('no timer once a call is answered, or once it is aborted during a retry wait, and no listener either', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const answered = client(status(204), { timeoutMs: 60_000 });
    await answered.kyb.request('GET', '/api/v1/kyb/things');
    expect(vi.getTimerCount()).toBe(0);

    const controller = new AbortController();
    const waiting = client(status(503, { 'retry-after': '20' }), {
      timeoutMs: 60_000,
      retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 60_000 },
    });
    const call = failure(waiting.kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(1000);
    expect(waiting.at).toHaveLength(1);
    controller.abort();
    expect(await call).toMatchObject({ code: 'aborted', attempts: 1 });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
