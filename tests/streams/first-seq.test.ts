/**
 * The spec does not say whether a stream's seq starts at 0 or 1, so `ordering.firstSeq` is a guess. Over real HTTP
 * with the local service, a wrong guess in either direction must still run every event once, in order: the API's
 * first event says where a new stream starts. Before, a guess of 0 against streams starting at 1 answered every
 * first event 409 until the service gave up, and a guess of 1 against streams starting at 0 made seq 0 "late".
 */
import { afterEach, expect, it } from 'vitest';
import type { KybClient } from '@kyb-webhooks/client';
import { startRig } from './harness.js';
import { streamOrdering } from '@kyb-webhooks/core';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

for (const [seqBase, firstSeq] of [
  [1, 0],
  [0, 1],
] as const) {
  it(`streams start at ${seqBase}, firstSeq says ${firstSeq}: every event runs once, in order, each answered 200 at once`, async () => {
    // The rig creates the client; the receiver's fetcher reaches it once the rig is up (nothing is delivered before).
    const api: { client?: KybClient } = {};
    const rig = await startRig(
      {
        adapter: 'Express',
        service: { seqBase, retry: { maxAttempts: 3 } },
        ordering: streamOrdering({
          mode: 'enforce',
          firstSeq,
          fetchEventsAfter: (streamId, afterSeq, signal) => api.client!.events(streamId, { afterSeq, signal }),
        }),
      },
      cleanups,
    );
    api.client = rig.client;
    const id = await rig.service.createDataRequest();
    await rig.service.release(id);
    await rig.service.idle();

    expect(rig.seqs(id)).toEqual([seqBase, seqBase + 1]);
    expect(rig.service.exhausted).toEqual([]);
    expect(rig.service.attempts(id).map((attempt) => [attempt.seq, attempt.status])).toEqual([
      [seqBase, 200],
      [seqBase + 1, 200],
    ]);
  });
}
