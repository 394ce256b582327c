// The job a verified delivery becomes in queue mode, and the delivery a worker's handlers get back from it.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createMemoryQueue } from './memory-queue.js';
import type { QueuedEvent } from './types.js';
import { createQueueWorker } from './worker.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'queue-job-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup() {
  const queue = createMemoryQueue({ now: () => NOW });
  const stored: QueuedEvent[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = (event) => {
    stored.push(event);
    return enqueue(event);
  };
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    logger: false,
    queue,
  });
  return { queue, receiver, stored };
}

describe('queue mode: the job a delivery becomes', () => {
  it("gives the worker's handlers the Service-Delivery-Attempt of the delivery that was enqueued", async () => {
    const { queue, receiver } = setup();
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!, { attempt: 3 });
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('queued');
    const attempts: (number | undefined)[] = [];
    receiver.onAny((_event, context) => void attempts.push(context.deliveryAttempt));
    const worker = createQueueWorker(receiver);
    await worker.start();
    await expect.poll(() => queue.backlog()).toBe(0);
    await worker.stop();
    expect(attempts).toEqual([3]);
  });

  it('holds no claims and no delivery attempt when the delivery had neither', async () => {
    const { receiver, stored } = setup();
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    delete headers['service-delivery-attempt'];
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('queued');
    expect(stored).toHaveLength(1);
    expect(Object.keys(stored[0]!.payload).sort()).toEqual(['authentication', 'envelope', 'receivedAt', 'typed']);
  });
});
