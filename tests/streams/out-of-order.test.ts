/**
 * Issue 12 §5, out-of-order arrival, through the Fastify example app: a sender delivers a stream's seq 3 before seq 2
 * (the service's own envelopes, attestations included, signed with the endpoint's secret). Under `enforce` the
 * receiver fetches seq 2 from the local service's events API, runs it, then seq 3; the late seq 2 and the service's
 * own in-order deliveries afterwards are all answered `duplicate`.
 */
import { afterEach, expect, it } from 'vitest';
import { createTestSender, createTestSigner } from '@kyb-webhooks/testing';
import { startRig } from './harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// A business's wallet changes (spec 6 rule 1): applied out of order, the business would end on a stale address.
async function walletStream(rig: Awaited<ReturnType<typeof startRig>>) {
  const businessId = 'biz_out_of_order';
  await rig.service.changeBusinessWallet({ businessId, previous: '0xa1', next: '0xa2' });
  await rig.service.changeBusinessWallet({ businessId, previous: '0xa2', next: '0xa3' });
  await rig.service.changeBusinessWallet({ businessId, previous: '0xa3', next: '0xa4' });
  const events = rig.service.request(businessId)!.events;
  const signer = await createTestSigner({ secrets: rig.secrets });
  const sender = createTestSender({ url: rig.app.url, signer, retry: { maxAttempts: 1 } });
  return { businessId, events, sender };
}

it('seq 3 delivered before seq 2 (streams start at 1): handlers see 1, 2, 3, seq 2 fetched from the API', async () => {
  const rig = await startRig({ adapter: 'Fastify', service: { seqBase: 1 }, connect: false }, cleanups);
  const { businessId, events, sender } = await walletStream(rig);
  const [one, two, three] = events;

  expect((await sender.deliverOnce(one!)).status).toBe(200);
  const early = await sender.deliverOnce(three!);
  expect([early.status, early.code]).toEqual([200, undefined]);

  expect(rig.handled.map((entry) => [entry.seq, entry.fetched])).toEqual([
    [1, false],
    [2, true],
    [3, false],
  ]);
  expect(rig.service.apiCalls.map((call) => call.path)).toContain(
    `/api/v1/kyb/data-requests/${businessId}/events?after_seq=1`,
  );
  // The wallet ends on the last address because the changes were applied in order.
  expect(rig.handled.map((entry) => entry.eventId)).toEqual([one!.event_id, two!.event_id, three!.event_id]);
});

it('the late seq 2 is answered duplicate, and its handler does not run again', async () => {
  const rig = await startRig({ adapter: 'Fastify', service: { seqBase: 1 }, connect: false }, cleanups);
  const { events, sender } = await walletStream(rig);
  await sender.deliverOnce(events[0]!);
  await sender.deliverOnce(events[2]!);

  const late = await sender.deliverOnce(events[1]!);
  expect([late.status, late.code]).toEqual([200, 'duplicate']);
  expect(rig.handled.map((entry) => entry.seq)).toEqual([1, 2, 3]);
});

it("the service's own in-order deliveries that follow are all duplicates: each event ran once", async () => {
  const rig = await startRig({ adapter: 'Fastify', service: { seqBase: 1 }, connect: false }, cleanups);
  const { businessId, events, sender } = await walletStream(rig);
  await sender.deliverOnce(events[0]!);
  await sender.deliverOnce(events[2]!);

  rig.connect();
  await rig.service.idle();
  expect(
    rig.service.attempts(businessId).map((attempt) => [attempt.seq, attempt.status, attempt.responseCode]),
  ).toEqual([
    [1, 200, 'duplicate'],
    [2, 200, 'duplicate'],
    [3, 200, 'duplicate'],
  ]);
  expect(rig.handled.map((entry) => entry.seq)).toEqual([1, 2, 3]);
});

it('without ordering the same arrival runs seq 3 before seq 2 (the control case)', async () => {
  const rig = await startRig(
    { adapter: 'Fastify', service: { seqBase: 1 }, connect: false, ordering: { mode: 'off' } },
    cleanups,
  );
  const { events, sender } = await walletStream(rig);
  await sender.deliverOnce(events[0]!);
  await sender.deliverOnce(events[2]!);
  await sender.deliverOnce(events[1]!);
  expect(rig.handled.map((entry) => entry.seq)).toEqual([1, 3, 2]);
});
