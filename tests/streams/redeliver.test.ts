/**
 * Issue 12 §5, redelivery, through each example app (see `workingAdapters` for Hono): after a stream was processed, the merchant asks
 * the local service to redeliver it (POST …/redeliver through the client). Every event arrives again with a higher
 * Service-Delivery-Attempt, the receiver answers 200 `duplicate` without running a handler, and the service's
 * delivery log shows those answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startRig, workingAdapters, type AdapterName, type StreamRig } from './harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function redelivered(adapter: AdapterName): Promise<{ rig: StreamRig; id: string; queued: number | undefined }> {
  const rig = await startRig({ adapter }, cleanups);
  const id = await rig.service.createDataRequest();
  await rig.service.release(id);
  await rig.service.idle();
  const { queued } = await rig.client.redeliver(id);
  await rig.service.idle();
  return { rig, id, queued };
}

describe.each(workingAdapters)('%s', (adapter) => {
  it('redeliver queues the stream again and every event is answered 200 duplicate', async () => {
    const { rig, id, queued } = await redelivered(adapter);
    expect(queued).toBe(2);
    const log = await rig.client.deliveries(id);
    expect(log.map((entry) => [entry.seq, entry.attempt, entry.status, entry.response_code])).toEqual([
      [0, 1, 200, undefined],
      [1, 1, 200, undefined],
      [0, 2, 200, 'duplicate'],
      [1, 2, 200, 'duplicate'],
    ]);
  });

  it('the handlers do not run again', async () => {
    const { rig, id } = await redelivered(adapter);
    expect(rig.handled.map((entry) => [entry.streamId, entry.seq, entry.deliveryAttempt])).toEqual([
      [id, 0, 1],
      [id, 1, 1],
    ]);
  });
});
