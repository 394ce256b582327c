/**
 * `waitUntil`: on Cloudflare Workers (and Vercel) a request's work stops once it is answered, so a handler that passed
 * handlerTimeoutMs could never settle its claim, and the event stayed locked until its lease ended, then ran again.
 * The fetch handler hands that late settlement to the Worker's `ctx.waitUntil` (its third argument) or to the
 * `waitUntil` option; the receiver takes it per delivery in `ReceiveInput.waitUntil`.
 */
import { describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, testStream } from '../../test-kit.js';
import { createFetchHandler } from './fetch-handler.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const url = 'http://localhost/webhooks/kyb';
// A short deadline, and a lease long enough that only the late outcome can free the event during the test.
const timing = { handlerTimeoutMs: 40, storeTimeoutMs: 50, leaseMs: 60_000 };

/** A handler's work that ends when the test says so: past the deadline, whatever the machine's load. */
function gate() {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { closed, open };
}

async function slowReceiver() {
  const signer = await createTestSigner();
  const receiver = createReceiver({ secrets: { ...signer.secrets }, logger: false, ...timing });
  let runs = 0;
  const work = gate();
  receiver.on('kyb.data_request.refused', async () => {
    runs += 1;
    await work.closed;
  });
  const delivery = await signer.sign(testEvents.dataRequestRefused());
  const request = () => new Request(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  return { receiver, signer, request, finish: work.open, runs: () => runs };
}

function recordingWaitUntil() {
  const handed: Promise<unknown>[] = [];
  return { handed, waitUntil: (promise: Promise<unknown>) => void handed.push(promise) };
}

describe('waitUntil keeps a timed-out handler’s late outcome alive after the answer', () => {
  it('a Worker’s ctx (the third argument): 503 at the deadline, then the late success is recorded through ctx.waitUntil', async () => {
    const { receiver, request, finish, runs } = await slowReceiver();
    const handle = createFetchHandler(receiver);
    const ctx = recordingWaitUntil();
    const first = await handle(request(), { SOME_BINDING: 'env' }, ctx);
    expect([first.status, ((await first.json()) as { error: { code: string } }).error.code]).toEqual([
      503,
      'handler_timeout',
    ]);
    expect(ctx.handed).toHaveLength(1);
    // Until the late outcome settles, the event stays claimed; once it has, the retry is a duplicate.
    expect((await handle(request())).status).toBe(409);
    finish();
    await ctx.handed[0];
    const retry = await handle(request());
    expect([retry.status, await retry.json(), runs()]).toEqual([200, { received: true, code: 'duplicate' }, 1]);
  });

  it('the waitUntil option (Vercel’s, from @vercel/functions) when the platform passes no ctx', async () => {
    const { receiver, request, finish } = await slowReceiver();
    const platform = recordingWaitUntil();
    const handle = createFetchHandler(receiver, { waitUntil: platform.waitUntil });
    expect((await handle(request())).status).toBe(503);
    expect(platform.handed).toHaveLength(1);
    finish();
    await platform.handed[0];
    expect(await (await handle(request())).json()).toEqual({ received: true, code: 'duplicate' });
  });

  it('is not called for a delivery answered in time, and a second argument that is not a ctx is ignored', async () => {
    const signer = await createTestSigner();
    const receiver = createReceiver({ secrets: { ...signer.secrets }, logger: false });
    receiver.on('kyb.data_request.refused', () => {});
    const ctx = recordingWaitUntil();
    const handle = createFetchHandler(receiver);
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    // Next.js passes a route context second, Bun its server, Deno its connection info.
    const response = await handle(
      new Request(url, { method: 'POST', headers, body }),
      { params: Promise.resolve({}) },
      ctx,
    );
    expect([response.status, ctx.handed]).toEqual([200, []]);
  });

  it('with ordering enforce, the late outcome of an event run in its turn is handed over too', async () => {
    const signer = await createTestSigner();
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      logger: false,
      ...timing,
      store: createMemoryStore(),
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: () => [] }),
    });
    const work = gate();
    receiver.on('kyb.data_request.pending_approval', () => work.closed);
    const [first] = testStream(['kyb.data_request.pending_approval']);
    const delivery = await signer.sign(first!);
    const platform = recordingWaitUntil();
    const answer = await receiver.receive({ method: 'POST', ...delivery, waitUntil: platform.waitUntil });
    expect([answer.status, platform.handed.length]).toEqual([503, 1]);
    work.open();
    await platform.handed[0];
    expect((await receiver.receive({ method: 'POST', ...delivery })).body).toEqual({
      received: true,
      code: 'duplicate',
    });
  });

  it('a waitUntil that throws changes nothing: still 503 handler_timeout, and the late success is still recorded', async () => {
    const { receiver, request, finish, runs } = await slowReceiver();
    const handle = createFetchHandler(receiver, {
      waitUntil: () => {
        throw new Error('waitUntil called outside its request');
      },
    });
    const first = await handle(request());
    expect([first.status, ((await first.json()) as { error: { code: string } }).error.code]).toEqual([
      503,
      'handler_timeout',
    ]);
    finish();
    await expect
      .poll(async () => (await (await handle(request())).json()) as object)
      .toEqual({ received: true, code: 'duplicate' });
    expect(runs()).toBe(1);
  });

  it('a claim that lands after storeTimeoutMs is handed back through waitUntil, so the retry need not wait out the lease', async () => {
    const signer = await createTestSigner();
    const memory = createMemoryStore();
    const slowClaims = gate();
    let slow = true;
    const store = {
      ...memory,
      claim: async (...args: Parameters<typeof memory.claim>) => {
        if (slow) await slowClaims.closed;
        return memory.claim(...args);
      },
    };
    const receiver = createReceiver({ secrets: { ...signer.secrets }, logger: false, ...timing, store });
    receiver.on('kyb.data_request.refused', () => {});
    const delivery = await signer.sign(testEvents.dataRequestRefused());
    const platform = recordingWaitUntil();
    const first = await receiver.receive({ method: 'POST', ...delivery, waitUntil: platform.waitUntil });
    expect([first.status, first.code, platform.handed.length]).toEqual([503, 'store_unavailable', 1]);
    slow = false;
    slowClaims.open();
    await platform.handed[0];
    const retry = await receiver.receive({ method: 'POST', ...delivery });
    expect([retry.status, retry.body]).toEqual([200, { received: true }]);
  });
});
