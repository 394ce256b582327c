import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKybClient, KybApiError, type KybClientOptions } from './index.js';

// When a call is retried, how long it waits, and how a caller's abort ends it: the `fetch` option hands back real
// Responses and records each attempt. How long a wait lasts is read on fake timers, never on the wall clock: a loaded
// machine only makes real waits longer, so a bound on them proves nothing and fails at random.
const BASE = 'http://127.0.0.1:9';

afterEach(() => {
  vi.useRealTimers();
});

/** Timers the client sets (attempt timeouts, retry waits) run on a clock only the test moves. */
function fakeTimers() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
}

/** On fake timers: no new attempt `ms` − 1 ms from now, one at `ms`. */
async function expectNextAttemptAfter(calls: readonly unknown[], ms: number) {
  const made = calls.length;
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(calls, `no attempt ${made + 1} after ${ms - 1} ms`).toHaveLength(made);
  await vi.advanceTimersByTimeAsync(1);
  expect(calls, `attempt ${made + 1} after ${ms} ms`).toHaveLength(made + 1);
}

/** Whether a promise has settled yet, as a flag the test reads without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state = { settled: false, promise };
  void promise.finally(() => {
    state.settled = true;
  });
  return state;
}

function client(
  answer: (attempt: number, init: RequestInit) => Response | Promise<Response>,
  overrides: Partial<KybClientOptions> = {},
) {
  const calls: RequestInit[] = [];
  const kyb = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (_input, init) => {
      calls.push(init ?? {});
      return answer(calls.length, init ?? {});
    },
    ...overrides,
  });
  return { kyb, calls };
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
      const { kyb, calls } = client(status(code));
      const error = await failure(kyb.request('GET', '/api/v1/kyb/things'));
      expect(error).toMatchObject({ status: code, attempts: 4 });
      expect(calls).toHaveLength(4);
    },
  );

  it.each([400, 401, 404, 409, 501, 505])('a GET answered %i is not asked again', async (code) => {
    const { kyb, calls } = client(status(code));
    await expect(kyb.request('GET', '/api/v1/kyb/things')).rejects.toMatchObject({ status: code, attempts: 1 });
    expect(calls).toHaveLength(1);
  });

  it('a HEAD is retried like a GET, a POST or DELETE only when the call opts in', async () => {
    const head = client((attempt) => (attempt < 3 ? status(503)() : status(204)()));
    await expect(head.kyb.request('HEAD', '/api/v1/kyb/things')).resolves.toMatchObject({ status: 204 });
    expect(head.calls).toHaveLength(3);
    const del = client(status(503));
    await expect(del.kyb.request('DELETE', '/api/v1/kyb/things/1')).rejects.toMatchObject({ attempts: 1 });
    const opted = client((attempt) => (attempt < 2 ? status(503)() : status(204)()));
    await expect(opted.kyb.request('delete', '/api/v1/kyb/things/1', { retry: true })).resolves.toMatchObject({
      status: 204,
    });
    expect(opted.calls).toHaveLength(2);
  });
});

describe('how long a retry waits', () => {
  it('backs off exponentially, each wait drawn between half and all of the backoff', async () => {
    fakeTimers();
    const { kyb, calls } = client(status(503), {
      retry: { maxRetries: 2, baseDelayMs: 400, maxDelayMs: 10_000 },
      random: () => 0.75,
    });
    const call = failure(kyb.request('GET', '/api/v1/kyb/things'));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    // 200 + 0.75 × 200 ms, then 400 + 0.75 × 400 ms.
    await expectNextAttemptAfter(calls, 350);
    await expectNextAttemptAfter(calls, 700);
    expect(await call).toMatchObject({ status: 503, attempts: 3 });
  });

  it('waits half the backoff when the draw is 0, and never past maxDelayMs', async () => {
    fakeTimers();
    const { kyb, calls } = client(status(503), {
      retry: { maxRetries: 3, baseDelayMs: 120, maxDelayMs: 160 },
      random: () => 0,
    });
    const call = failure(kyb.request('GET', '/api/v1/kyb/things'));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    // 60, then min(240, 160) / 2 = 80 and min(480, 160) / 2 = 80.
    await expectNextAttemptAfter(calls, 60);
    await expectNextAttemptAfter(calls, 80);
    await expectNextAttemptAfter(calls, 80);
    expect(await call).toMatchObject({ status: 503, attempts: 4 });
  });

  it('waits out a Retry-After exactly at maxRetryAfterMs, and gives up on a longer one', async () => {
    fakeTimers();
    const waited = client((attempt) => (attempt === 1 ? status(503, { 'retry-after': '1' })() : status(204)()), {
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1000 },
    });
    const call = waited.kyb.request('GET', '/api/v1/kyb/things');
    await vi.advanceTimersByTimeAsync(0);
    expect(waited.calls).toHaveLength(1);
    await expectNextAttemptAfter(waited.calls, 1000);
    await expect(call).resolves.toMatchObject({ status: 204 });

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
    const { kyb, calls } = client(status(204));
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal }));
    expect(error).toMatchObject({ status: null, code: 'aborted', attempts: 0, cause: reason });
    expect(error.message).toBe('GET /api/v1/kyb/things was aborted by the caller.');
    expect(calls).toHaveLength(0);
  });

  it('ends an attempt in flight at once, well before its timeout, and a POST too', async () => {
    fakeTimers();
    for (const call of [
      (kyb: ReturnType<typeof client>['kyb'], signal: AbortSignal) =>
        kyb.request('GET', '/api/v1/kyb/things', { signal }),
      (kyb: ReturnType<typeof client>['kyb'], signal: AbortSignal) => kyb.reactivate({ signal }),
    ]) {
      const controller = new AbortController();
      const { kyb, calls } = client(hanging, {
        timeoutMs: 3000,
        retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      });
      const pending = track(failure(call(kyb, controller.signal)));
      await vi.advanceTimersByTimeAsync(30);
      expect(calls).toHaveLength(1);
      expect(pending.settled).toBe(false);
      controller.abort();
      // No time passes from here: the timeout cannot be what ends the attempt.
      await vi.advanceTimersByTimeAsync(0);
      expect(pending.settled).toBe(true);
      expect(await pending.promise).toMatchObject({ status: null, code: 'aborted', attempts: 1 });
      expect(calls).toHaveLength(1);
    }
  });

  it('ends a retry wait, saying how many attempts were made', async () => {
    const controller = new AbortController();
    const { kyb, calls } = client(status(503, { 'retry-after': '20' }), {
      retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 60_000 },
    });
    setTimeout(() => controller.abort(), 30);
    const error = await failure(kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal }));
    expect(error).toMatchObject({ code: 'aborted', attempts: 1 });
    expect(error.message).toBe('GET /api/v1/kyb/things was aborted by the caller.');
    expect(calls).toHaveLength(1);
  });

  it('leaves no listener on a signal shared by many calls, retried or not', async () => {
    const controller = new AbortController();
    const { kyb } = client((attempt) => (attempt % 2 === 1 ? status(503)() : status(204)()));
    for (let i = 0; i < 12; i++) await kyb.request('GET', '/api/v1/kyb/things', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('what a call leaves behind', () => {
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
    expect(waiting.calls).toHaveLength(1);
    controller.abort();
    expect(await call).toMatchObject({ code: 'aborted', attempts: 1 });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
