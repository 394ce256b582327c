import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { OrderingOptions } from '../ordering/types.js';
import { createReceiver } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'replay-secret' } });
});

/** pending_approval, released (attested), pending_approval, pending_approval, as the events API returns them. */
async function stream(): Promise<TestEnvelope[]> {
  const events = testStream([
    'kyb.data_request.pending_approval',
    'kyb.data_request.released',
    'kyb.data_request.pending_approval',
    'kyb.data_request.pending_approval',
  ]);
  return Promise.all(events.map((event) => signer.withAttestation(event)));
}

function setup(ordering?: OrderingOptions) {
  const receiver = createReceiver({
    secrets: { '1': 'replay-secret' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    ...(ordering ? { ordering: streamOrdering(ordering) } : {}),
  });
  const seen: { seq: number; fetched: boolean; attempt: number | undefined }[] = [];
  let failing = false;
  receiver.onAny((event, context) => {
    if (failing) throw new Error('downstream is down');
    seen.push({ seq: event.seq, fetched: context.authentication.fetched === true, attempt: context.deliveryAttempt });
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, seen, deliver, fail: (on: boolean) => void (failing = on) };
}

// As parsed from the API's JSON: nothing the receiver holds is shared with the test's objects.
const fetched = (event: TestEnvelope): unknown => structuredClone(event);

describe('receiver.replay (ordering off)', () => {
  it('runs a fetched event through the handlers, marked fetched, and answers 200 like a delivery', async () => {
    const { receiver, seen } = setup();
    const [first] = await stream();
    const result = await receiver.replay(fetched(first!));
    expect(result).toMatchObject({ status: 200, body: { received: true } });
    expect(result.code).toBeUndefined();
    expect(result.event?.event_id).toBe(first!.event_id);
    expect(seen).toEqual([{ seq: 0, fetched: true, attempt: undefined }]);
  });

  it('answers duplicate for an event processed before, whether delivered or replayed, and runs no handler again', async () => {
    const { receiver, seen, deliver } = setup();
    const [first, second] = await stream();
    expect((await deliver(first!)).status).toBe(200);
    expect(await receiver.replay(fetched(first!))).toMatchObject({
      status: 200,
      code: 'duplicate',
      body: { received: true, code: 'duplicate' },
    });
    expect((await receiver.replay(fetched(second!))).status).toBe(200);
    expect(await receiver.replay(fetched(second!))).toMatchObject({ status: 200, code: 'duplicate' });
    expect(seen.map((entry) => entry.seq)).toEqual([0, 1]);
  });

  it('verifies the attestation of a fetched attested event: a relabelled one is refused and no handler runs', async () => {
    const { receiver, seen } = setup();
    const release = (await stream())[1]!;
    const relabelled = { ...release, seq: 7 };
    const result = await receiver.replay(fetched(relabelled));
    expect(result).toMatchObject({ status: 401, code: 'attestation_relabelled' });
    expect(result.event).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it('refuses an attested type without its attestation and an envelope that is not one', async () => {
    const { receiver, seen } = setup();
    const { attestation: _dropped, ...bare } = (await stream())[1]!;
    expect(await receiver.replay(fetched(bare as TestEnvelope))).toMatchObject({
      status: 401,
      code: 'attestation_missing',
    });
    expect(await receiver.replay({ event: 'kyb.data_request.refused' })).toMatchObject({
      status: 400,
      code: 'envelope_invalid',
    });
    expect(await receiver.replay('not an event')).toMatchObject({ status: 400, code: 'envelope_invalid' });
    expect(seen).toEqual([]);
  });

  it('answers handler_failed when a handler throws and frees the event, so a later replay runs it', async () => {
    const { receiver, seen, fail } = setup();
    const [first] = await stream();
    fail(true);
    expect(await receiver.replay(fetched(first!))).toMatchObject({ status: 500, code: 'handler_failed' });
    fail(false);
    expect((await receiver.replay(fetched(first!))).status).toBe(200);
    expect(seen.map((entry) => entry.seq)).toEqual([0]);
  });

  it('rejects with the signal reason when the signal was aborted before the replay, and runs nothing', async () => {
    const { receiver, seen } = setup();
    const [first] = await stream();
    const reason = new Error('recovery cancelled');
    await expect(receiver.replay(fetched(first!), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(seen).toEqual([]);
    expect((await receiver.replay(fetched(first!))).status).toBe(200);
  });

  it("aborts the handlers' context signal when the caller's signal aborts while they run", async () => {
    const receiver = createReceiver({ secrets: { '1': 'replay-secret' }, now: () => NOW });
    const controller = new AbortController();
    let aborted: unknown;
    receiver.onAny(async (_event, context) => {
      controller.abort(new Error('shutting down'));
      aborted = context.signal.aborted ? (context.signal.reason as Error).message : 'not aborted';
    });
    const [first] = await stream();
    expect((await receiver.replay(fetched(first!), { signal: controller.signal })).status).toBe(200);
    expect(aborted).toBe('shutting down');
  });

  it('reports its ordering mode: off by default', () => {
    expect(setup().receiver.orderingMode).toBe('off');
  });
});

describe('receiver.replay (ordering enforce)', () => {
  function enforced(api: TestEnvelope[]) {
    const fetches: number[] = [];
    const context = setup({
      mode: 'enforce',
      fetchEventsAfter: async function* (streamId, afterSeq) {
        fetches.push(afterSeq);
        for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
      },
    });
    return { ...context, fetches };
  }

  it('runs replayed events in seq order and moves the cursor, so the next delivery runs without a backfill', async () => {
    const events = await stream();
    const { receiver, seen, deliver, fetches } = enforced(events);
    expect(receiver.orderingMode).toBe('enforce');
    for (const event of events.slice(0, 3)) expect((await receiver.replay(fetched(event))).status).toBe(200);
    expect((await deliver(events[3]!)).status).toBe(200);
    expect(seen.map((entry) => [entry.seq, entry.fetched])).toEqual([
      [0, true],
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(fetches).toEqual([]);
  });

  it('backfills what lies between the cursor and a replayed event ahead of it, like for a delivery', async () => {
    const events = await stream();
    const { receiver, seen, fetches } = enforced(events);
    expect((await receiver.replay(fetched(events[2]!))).status).toBe(200);
    expect(seen.map((entry) => entry.seq)).toEqual([0, 1, 2]);
    expect(fetches).toEqual([-1]);
  });

  it('answers duplicate for an event at or behind the cursor that was processed, and late_unhandled for one that was not', async () => {
    const events = await stream();
    const { receiver, deliver } = enforced(events);
    for (const event of events.slice(0, 2)) expect((await deliver(event)).status).toBe(200);
    expect(await receiver.replay(fetched(events[1]!))).toMatchObject({ status: 200, code: 'duplicate' });
    // An event of the stream's past never processed (another event id at seq 0): only onGap handlers may take it.
    const stray = { ...events[0]!, event_id: testStream(['kyb.data_request.refused'])[0]!.event_id };
    expect(await receiver.replay(fetched(stray))).toMatchObject({ status: 500, code: 'late_unhandled' });
  });
});

describe("receiver.replay and the caller's signal", () => {
  function receiverSeeingSignals() {
    const receiver = createReceiver({ secrets: { '1': 'replay-secret' }, now: () => NOW, logger: false });
    const contexts: { signal: AbortSignal }[] = [];
    receiver.onAny((_event, context) => void contexts.push(context));
    return { receiver, contexts };
  }

  it("aborts the handlers' context signal when the caller's signal aborted while the event was being verified", async () => {
    const { receiver, contexts } = receiverSeeingSignals();
    const [first] = await stream();
    const controller = new AbortController();
    const replaying = receiver.replay(fetched(first!), { signal: controller.signal });
    controller.abort(new Error('cancelled during verification'));
    expect((await replaying).status).toBe(200);
    expect(contexts.map(({ signal }) => (signal.reason as Error | undefined)?.message)).toEqual([
      'cancelled during verification',
    ]);
  });

  it("leaves the handlers' context signal alone once the replay has ended", async () => {
    const { receiver, contexts } = receiverSeeingSignals();
    const [first] = await stream();
    const controller = new AbortController();
    expect((await receiver.replay(fetched(first!), { signal: controller.signal })).status).toBe(200);
    controller.abort(new Error('too late'));
    expect(contexts.map(({ signal }) => signal.aborted)).toEqual([false]);
  });
});
