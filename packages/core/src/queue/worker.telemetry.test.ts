// Queue mode and the receiver's `telemetry` option (docs/observability.md): the trace context the layer injects as a
// delivery is enqueued comes back to the worker's `job` operation, and a job's last failed attempt is told to
// `streamBlocked`.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { JobTrace } from '../telemetry/channels.js';
import type { ReceiverTelemetry, StreamBlockedReport } from '../telemetry/observers.js';
import { createMemoryQueue, type MemoryQueue } from './memory-queue.js';
import type { QueuedEvent } from './types.js';
import { createQueueWorker } from './worker.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'queue-telemetry-secret';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** A layer that records the `job` operations it wraps (their trace objects, filled in as they settle). */
function recordingLayer(extra: Partial<ReceiverTelemetry> = {}) {
  const jobs: JobTrace[] = [];
  const blocked: StreamBlockedReport[] = [];
  const telemetry: ReceiverTelemetry = {
    around(operation, trace, run) {
      if (operation === 'job') jobs.push(trace as JobTrace);
      return run();
    },
    streamBlocked: (report) => void blocked.push(report),
    ...extra,
  };
  return { telemetry, jobs, blocked };
}

/** The memory queue, recording every event as it is enqueued (what a durable engine would store). */
function recorded(queue: MemoryQueue): QueuedEvent[] {
  const stored: QueuedEvent[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = (event) => {
    stored.push(event);
    return enqueue(event);
  };
  return stored;
}

function receiverOver(queue: MemoryQueue, telemetry?: ReceiverTelemetry) {
  return createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    logger: false,
    queue,
    ...(telemetry ? { telemetry } : {}),
  });
}

async function deliverTo(receiver: ReturnType<typeof createReceiver>, envelope: TestEnvelope) {
  const { headers, body } = await signer.sign(envelope);
  return receiver.receive({ method: 'POST', headers, body });
}

describe('queue mode: telemetry', () => {
  it("carries the injected trace context to the worker's job operation, with each run's outcome", async () => {
    const queue = createMemoryQueue({ retryDelayMs: 0, now: () => NOW });
    const http = receiverOver(queue, {
      around: (_operation, _trace, run) => run(),
      inject: () => ({ traceparent: TRACEPARENT }),
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliverTo(http, event!)).code).toBe('queued');

    const layer = recordingLayer();
    const receiver = receiverOver(queue, layer.telemetry);
    let failures = 1;
    receiver.onAny(() => {
      if (failures-- > 0) throw new Error('audit is down');
    });
    const worker = createQueueWorker(receiver);
    await worker.start();
    await expect.poll(() => queue.backlog()).toBe(0);
    await worker.stop();
    const job = {
      jobId: expect.any(String) as string,
      queue: 'memory queue',
      eventId: event!.event_id,
      eventType: event!.event,
      streamId: event!.stream_id,
      seq: event!.seq,
      enqueuedAt: NOW,
      carrier: { traceparent: TRACEPARENT },
    };
    expect(layer.jobs).toHaveLength(2);
    expect(layer.jobs[0]).toMatchObject({ ...job, attempt: 1, status: 500, code: 'handler_failed' });
    // A run answered without a code reports none (no `code` entry at all).
    expect(layer.jobs[1]).toEqual({ ...job, attempt: 2, status: 200 });
    expect('code' in layer.jobs[1]!).toBe(false);
  });

  it('stores no trace in the job when no layer injects one', async () => {
    const queue = createMemoryQueue({ now: () => NOW });
    const stored = recorded(queue);
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliverTo(receiverOver(queue), event!)).code).toBe('queued');
    expect(stored).toHaveLength(1);
    expect('trace' in stored[0]!).toBe(false);
  });

  it("tells streamBlocked once, when a job's last attempt fails", async () => {
    const queue = createMemoryQueue({ retryDelayMs: 0, retryLimit: 1, now: () => NOW });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliverTo(receiverOver(queue), event!);
    const layer = recordingLayer();
    const receiver = receiverOver(queue, layer.telemetry);
    receiver.onAny(() => {
      throw new Error('always fails');
    });
    const worker = createQueueWorker(receiver);
    await worker.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(1);
    await worker.stop();
    expect(layer.blocked).toEqual([
      {
        streamId: event!.stream_id,
        seq: event!.seq,
        eventId: event!.event_id,
        eventType: event!.event,
        attempts: 2,
        error: 'handler_failed',
      },
    ]);
  });
});
