// Ordering in queue mode (docs/queue-mode.md): the receiver enqueues every verified event as it arrives, and the
// workers run the ordered path (ordering/receive.ts) on each job. The queue hands a stream's jobs out in enqueue
// order, which is the arrival order, not seq order; `enforce` in the worker turns it into seq order, backfilling a
// missing seq from the API as an inline delivery would, and `detect` reports the gap.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { streamOrdering } from '../ordering/stream-ordering.js';
import type { FetchEventsAfter, GapReport } from '../ordering/types.js';
import { createReceiver } from '../receiver.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createMemoryQueue } from './memory-queue.js';
import { createQueueWorker } from './worker.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'queue-ordering-secret';
const PENDING = 'kyb.data_request.pending_approval';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup(mode: 'detect' | 'enforce', api: TestEnvelope[] = [], queueOptions: { retryLimit?: number } = {}) {
  const queue = createMemoryQueue({ retryDelayMs: 1, retryLimit: 3, ...queueOptions, now: () => NOW });
  const logs: LogEntry[] = [];
  const fetches: number[] = [];
  const fetchEventsAfter: FetchEventsAfter = async function* (streamId, afterSeq) {
    fetches.push(afterSeq);
    for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
  };
  // One store, shared by the HTTP receiver and the worker's, as a Redis or SQL store would be across processes.
  const store = createMemoryStore({ now: () => NOW });
  const make = () =>
    createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: (entry) => logs.push(entry),
      store,
      queue,
      // backfillRetryAfterMs 0: the clock is fixed, so a remembered gap would otherwise never be asked about again.
      ordering: streamOrdering(mode === 'enforce' ? { mode, fetchEventsAfter, backfillRetryAfterMs: 0 } : { mode }),
    });
  const http = make();
  const worker = make();
  const seen: number[] = [];
  const gaps: GapReport[] = [];
  worker.onAny((event) => void seen.push(event.seq));
  worker.onGap((report) => void gaps.push(report));
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    const answer = await http.receive({ method: 'POST', headers, body });
    return { status: answer.status, code: answer.code };
  };
  const drain = async () => {
    const running = createQueueWorker(worker);
    await running.start();
    await expect.poll(() => queue.backlog()).toBe(0);
    await running.stop();
  };
  return { queue, worker, deliver, drain, seen, gaps, fetches, logs };
}

describe('queue mode with ordering: the workers keep each stream in seq order', () => {
  it('enforce: an event enqueued before an earlier one is run after it, the earlier one backfilled from the API', async () => {
    const events = testStream([PENDING, PENDING, PENDING, PENDING]);
    const { deliver, drain, seen, fetches, logs } = setup('enforce', events);
    // The service delivers seq 0 and 3 first (1 and 2 are delayed); all four are enqueued as they arrive.
    for (const index of [0, 3, 1, 2]) expect(await deliver(events[index]!)).toEqual({ status: 200, code: 'queued' });
    await drain();
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(fetches).toEqual([0]);
    // The jobs of seq 1 and 2 come after the backfill ran them: duplicates, not a second run.
    expect(logs.filter((entry) => entry.code === 'duplicate').map((entry) => entry.eventId)).toEqual([
      events[1]!.event_id,
      events[2]!.event_id,
    ]);
  });

  it('enforce: a job whose gap the API cannot fill yet fails out_of_order, is retried, and runs once it can', async () => {
    const events = testStream([PENDING, PENDING, PENDING]);
    const api: TestEnvelope[] = [];
    const { queue, worker, deliver, seen, fetches } = setup('enforce', api, { retryLimit: 1_000 });
    await deliver(events[0]!);
    await deliver(events[2]!);
    const running = createQueueWorker(worker);
    await running.start();
    await expect.poll(() => fetches.length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([0]);
    api.push(events[1]!); // the API has it now
    await expect.poll(() => queue.backlog()).toBe(0);
    await running.stop();
    expect(seen).toEqual([0, 1, 2]);
  });

  it('detect: jobs run in the order they were enqueued and the gap is reported', async () => {
    const events = testStream([PENDING, PENDING, PENDING]);
    const { deliver, drain, seen, gaps } = setup('detect');
    await deliver(events[0]!);
    await deliver(events[2]!);
    await drain();
    expect(seen).toEqual([0, 2]);
    expect(gaps).toEqual([expect.objectContaining({ streamId: events[0]!.stream_id })]);
  });
});
