/**
 * Issue 12 §5, quarantine and recovery, through the Hono example app: the app goes down, the local service's
 * deliveries keep failing and it quarantines the endpoint (spec 6 rule 4); events keep queuing, none is dropped. The
 * app comes back, the merchant reactivates through the client, and the backlog arrives in order: every stream's
 * handlers see all its events, once, in seq order.
 */
import { afterEach, expect, it } from 'vitest';
import { recover } from '@kyb-webhooks/client';
import { startRig, type StreamRig } from './harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Three requests created during an outage (quarantine after 3 failures), then more events while quarantined. */
async function quarantinedBacklog(): Promise<{ rig: StreamRig; ids: string[] }> {
  const rig = await startRig({ adapter: 'Hono', service: { quarantineAfter: 3 } }, cleanups);
  const before = await rig.service.createDataRequest();
  await rig.service.idle();
  await rig.stopApp();

  const ids = [before, ...(await Promise.all([rig.service.createDataRequest(), rig.service.createDataRequest()]))];
  await rig.service.release(before);
  await rig.service.idle();
  // While quarantined, the requests move on and their events queue.
  await rig.service.release(ids[1]!);
  await rig.service.refuse(ids[2]!, 'threshold_not_met');
  await rig.service.emit(ids[2]!, 'kyb.data_request.pending_approval', { request_id: ids[2] });
  await rig.service.idle();
  await rig.startApp(); // back, on a new port the service's endpoint now points at
  return { rig, ids };
}

it('the endpoint is quarantined after repeated failures; events keep queuing, none delivered or dropped', async () => {
  const { rig, ids } = await quarantinedBacklog();
  expect(rig.service.quarantined).toBe(true);
  const attemptsWhileQuarantined = rig.service.attempts().length;
  expect(
    rig.service
      .attempts()
      .slice(1)
      .every((attempt) => attempt.status === null && attempt.error?.startsWith('network error')),
  ).toBe(true);
  expect(rig.service.exhausted).toEqual([]);
  // ids[0]: released; ids[1]: pending, released; ids[2]: pending, refused, pending.
  expect(ids.map((id) => rig.service.pending(id))).toEqual([1, 2, 3]);
  await rig.service.idle();
  expect(rig.service.attempts().length).toBe(attemptsWhileQuarantined);
  expect(rig.handled.map((entry) => entry.seq)).toEqual([0]);
});

it('reactivated through the client, the backlog arrives in order: every event once, nothing lost', async () => {
  const { rig, ids } = await quarantinedBacklog();
  await expect(rig.client.reactivate()).resolves.toMatchObject({ reactivated: true, was_quarantined: true });
  await rig.service.idle();

  expect(rig.service.quarantined).toBe(false);
  expect(rig.service.pending()).toBe(0);
  for (const id of ids) {
    const sent = rig.service.request(id)!.events.map((event) => event.event_id);
    expect(rig.handled.filter((entry) => entry.streamId === id).map((entry) => entry.eventId)).toEqual(sent);
  }
  expect(ids.map((id) => rig.seqs(id))).toEqual([
    [0, 1],
    [0, 1],
    [0, 1, 2],
  ]);
  // Delivered, not fetched: the service kept the backlog (the cursor never saw a gap).
  expect(rig.handled.filter((entry) => entry.fetched)).toEqual([]);
});

it("the backlog's first deliveries count on from the attempts that failed before the quarantine", async () => {
  const { rig, ids } = await quarantinedBacklog();
  await rig.client.reactivate();
  await rig.service.idle();
  const log = await rig.client.deliveries(ids[1]!);
  const first = log.filter((entry) => entry.seq === 0);
  expect(first.map((entry) => entry.status)).toEqual([...first.slice(0, -1).map(() => null), 200]);
  expect(first.map((entry) => entry.attempt)).toEqual(first.map((_, index) => index + 1));
});

it('recovered in one call by recover(): the backlog replayed in order from the API, then the reactivated backlog is all duplicate', async () => {
  const { rig, ids } = await quarantinedBacklog();
  const report = await recover({ client: rig.client, receiver: rig.receiver, requestIds: ids });
  expect([report.ok, report.reactivated, report.totals.processed, report.totals.failed]).toEqual([true, true, 6, 0]);
  await rig.service.idle();

  expect(ids.map((id) => rig.seqs(id))).toEqual([
    [0, 1],
    [0, 1],
    [0, 1, 2],
  ]);
  expect(rig.handled.filter((entry) => entry.fetched).length).toBe(6);
  // Every answered attempt after the one delivery before the outage: the held backlog, delivered after reactivation.
  const backlog = rig.service
    .attempts()
    .slice(1)
    .filter((attempt) => attempt.status !== null);
  expect(backlog.map((attempt) => attempt.responseCode)).toEqual(backlog.map(() => 'duplicate'));
  expect(backlog.length).toBe(6);
});
