import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import type { ReceiverOptions } from '../receiver-types.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createMemoryQueue, type MemoryQueue } from './memory-queue.js';
import { QueueFullError, type EventQueue } from './types.js';
import { createQueueWorker, JobFailedError } from './worker.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'queue-mode-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** Waits until `done()` holds, or fails after `ms`. */
async function until(done: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function setup(options: { queue?: MemoryQueue; overrides?: Partial<ReceiverOptions> } = {}) {
  const queue = options.queue ?? createMemoryQueue({ retryDelayMs: 1, retryLimit: 2, now: () => NOW });
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    logger: (entry) => logs.push(entry),
    queue,
    ...options.overrides,
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { queue, receiver, deliver, logs };
}

describe('queue mode: the receiver', () => {
  it('answers 200 queued once the queue holds the event, and runs no handler itself', async () => {
    const { queue, receiver, deliver } = setup();
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(event.event_id));
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const result = await deliver(event!);
    expect(result).toMatchObject({ status: 200, code: 'queued', body: { received: true, code: 'queued' } });
    expect(result.event?.event_id).toBe(event!.event_id);
    expect(queue.backlog()).toBe(1);
    expect(ran).toEqual([]);
  });

  it('answers a second copy duplicate without a second job', async () => {
    const { queue, deliver } = setup();
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliver(event!);
    expect(await deliver(event!)).toMatchObject({ status: 200, code: 'duplicate' });
    expect(queue.backlog()).toBe(1);
  });

  it('enqueues nothing a check refused', async () => {
    const { queue, receiver } = setup();
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    const tampered = new Uint8Array(body);
    tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
    expect(await receiver.receive({ method: 'POST', headers, body: tampered })).toMatchObject({
      status: 401,
      code: 'signature_mismatch',
    });
    expect(queue.backlog()).toBe(0);
  });

  it('never enqueues an unauthenticated delivery: only onUnauthenticated runs, inline', async () => {
    const queue = createMemoryQueue();
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: false,
      queue,
    });
    const hints: string[] = [];
    receiver.onUnauthenticated((event) => void hints.push(event.event_id));
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    expect(await receiver.receive({ method: 'POST', headers, body })).toMatchObject({
      status: 200,
      code: 'unauthenticated',
    });
    expect(hints).toEqual([event!.event_id]);
    expect(queue.backlog()).toBe(0);
  });

  it.each<[string, Partial<EventQueue>, number, string, string]>([
    [
      'fails',
      { enqueue: () => Promise.reject(new Error('connection refused')) },
      503,
      'queue_unavailable',
      'memory queue enqueue failed',
    ],
    [
      'is over its backlog',
      { enqueue: () => Promise.reject(new QueueFullError(12.2)) },
      429,
      'queue_full',
      'retry after 13 s',
    ],
    [
      'hangs past storeTimeoutMs',
      { enqueue: () => new Promise<never>(() => {}) },
      503,
      'queue_unavailable',
      'memory queue enqueue took over 20 ms',
    ],
  ])(
    'answers a delivery the queue cannot take (it %s) with a retryable non-2xx',
    async (_, broken, status, code, detail) => {
      const queue = Object.assign(createMemoryQueue(), broken);
      const { deliver, logs } = setup({ queue, overrides: { storeTimeoutMs: 20, handlerTimeoutMs: 100 } });
      const [event] = testStream(['kyb.data_request.pending_approval']);
      const result = await deliver(event!);
      expect(result).toMatchObject({ status, code, body: { error: { code } } });
      if (code === 'queue_full') expect(result.headers).toEqual({ 'retry-after': '13' });
      expect(logs.at(-1)).toMatchObject({ message: `delivery rejected: ${code}`, eventId: event!.event_id, detail });
    },
  );
});

describe('queue mode: the worker', () => {
  it('runs the receiver’s handlers with the delivery’s context plus the job', async () => {
    const { receiver, deliver, queue } = setup();
    const seen: unknown[] = [];
    receiver.on('kyb.data_request.released', (event, context) => {
      seen.push({
        id: event.event_id,
        hmac: context.authentication.hmac,
        attested: context.authentication.attestation,
        answers: context.answers.size,
        attempt: context.job?.attempt,
        enqueuedAt: context.job?.enqueuedAt,
      });
    });
    const [released] = testStream(['kyb.data_request.released']);
    const attested = await signer.withAttestation(released!);
    await deliver(attested);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(seen).toEqual([
      {
        id: released!.event_id,
        hmac: { version: '1' },
        attested: true,
        answers: expect.any(Number) as number,
        attempt: 1,
        enqueuedAt: NOW,
      },
    ]);
    expect((seen[0] as { answers: number }).answers).toBeGreaterThan(0);
  });

  it('retries a failing handler with backoff until it succeeds, and never runs a processed event again', async () => {
    const { receiver, deliver, queue } = setup();
    const attempts: number[] = [];
    receiver.onAny((_event, { job }) => {
      attempts.push(job!.attempt);
      if (job!.attempt < 3) throw new Error('downstream is down');
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliver(event!);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(attempts).toEqual([1, 2, 3]);
    expect(await deliver(event!)).toMatchObject({ status: 200, code: 'duplicate' });
  });

  it('blocks a stream whose job fails every retry; its later events wait until the job is skipped with a reason', async () => {
    const { receiver, deliver, queue, logs } = setup();
    const ran: number[] = [];
    receiver.onAny((event) => {
      if (event.seq === 1) throw new Error('always fails');
      ran.push(event.seq);
    });
    const events = testStream(Array(3).fill('kyb.data_request.pending_approval'));
    for (const event of events) await deliver(event);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(1);
    const [blocked] = await queue.blockedStreams();
    expect(blocked).toMatchObject({ streamId: events[1]!.stream_id, seq: 1, attempts: 3, error: 'handler_failed' });
    // Logged once, when the last attempt failed: which stream, where, why, and what to do.
    const blockedLines = logs.filter((entry) => entry.code === 'stream_blocked');
    expect(blockedLines).toEqual([
      expect.objectContaining({
        level: 'error',
        eventId: events[1]!.event_id,
        detail: 'handler_failed',
        message: `stream ${events[1]!.stream_id} is blocked at seq 1: its job failed 3 time(s), last with handler_failed, and is dead-lettered; its later events wait. Fix the cause, then queue.retryStream('${events[1]!.stream_id}'), or skip it with queue.skipBlocked('${events[1]!.stream_id}', { reason })`,
      }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toEqual([0]);

    expect(await queue.skipBlocked(events[1]!.stream_id, { reason: 'checked by ops, ticket 42' })).toBe(true);
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(ran).toEqual([0, 2]);
    expect(queue.skipped()).toEqual([
      { streamId: events[1]!.stream_id, eventId: events[1]!.event_id, seq: 1, reason: 'checked by ops, ticket 42' },
    ]);
    expect(await queue.blockedStreams()).toEqual([]);
  });

  it('runs a blocked job again on retryStream, and the stream goes on once it succeeds', async () => {
    const { receiver, deliver, queue } = setup();
    let healthy = false;
    const ran: number[] = [];
    receiver.onAny((event) => {
      if (!healthy) throw new Error('down');
      ran.push(event.seq);
    });
    const events = testStream(Array(2).fill('kyb.data_request.pending_approval'));
    for (const event of events) await deliver(event);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(1);
    healthy = true;
    expect(await queue.retryStream(events[0]!.stream_id)).toBe(true);
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(ran).toEqual([0, 1]);
    expect(await queue.retryStream(events[0]!.stream_id)).toBe(false);
  });

  it('runs each stream one event at a time in seq order while streams run side by side', async () => {
    const { receiver, deliver, queue } = setup();
    const running = new Set<string>();
    const order = new Map<string, number[]>();
    let overlap = 0;
    let sideBySide = 0;
    receiver.onAny(async (event) => {
      if (running.has(event.stream_id)) overlap++;
      running.add(event.stream_id);
      sideBySide = Math.max(sideBySide, running.size);
      await new Promise((resolve) => setTimeout(resolve, 1 + (event.seq % 3)));
      order.set(event.stream_id, [...(order.get(event.stream_id) ?? []), event.seq]);
      running.delete(event.stream_id);
    });
    const streams = [0, 1, 2].map(() => testStream(Array(5).fill('kyb.data_request.pending_approval')));
    for (let seq = 0; seq < 5; seq++) for (const stream of streams) await deliver(stream[seq]!);
    const worker = createQueueWorker(receiver, { concurrency: 4 });
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(overlap).toBe(0);
    expect(sideBySide).toBeGreaterThan(1);
    for (const stream of streams) expect(order.get(stream[0]!.stream_id)).toEqual([0, 1, 2, 3, 4]);
  });

  it('stop() waits for the jobs already running', async () => {
    const { receiver, deliver } = setup();
    let finished = false;
    receiver.onAny(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished = true;
    });
    const worker = createQueueWorker(receiver);
    await worker.start();
    await deliver(testStream(['kyb.data_request.pending_approval'])[0]!);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.stop();
    expect(finished).toBe(true);
  });

  it('start() after a failed subscription tries again, and stop() after one has nothing to stop', async () => {
    const { receiver, deliver, queue } = setup();
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(event.event_id));
    const work = queue.work.bind(queue);
    let down = true;
    queue.work = (handle, options) => (down ? Promise.reject(new Error('queue down')) : work(handle, options));
    const worker = createQueueWorker(receiver);
    await expect(worker.start()).rejects.toThrow('queue down');
    await worker.stop();
    down = false;
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliver(event!);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(ran).toEqual([event!.event_id]);
  });

  it('fails a job back to the queue with the code its run would have answered inline', async () => {
    const failures: unknown[] = [];
    const queue = createMemoryQueue({ retryLimit: 0 });
    const { receiver, deliver } = setup({ queue });
    receiver.onAny(() => {
      throw new Error('nope');
    });
    const original = queue.work.bind(queue);
    queue.work = (handle, options) =>
      original(
        (job) =>
          handle(job).catch((error: unknown) => {
            failures.push(error);
            throw error;
          }),
        options,
      );
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliver(event!);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => failures.length === 1);
    await worker.stop();
    expect(failures[0]).toBeInstanceOf(JobFailedError);
    expect(failures[0]).toMatchObject({
      name: 'JobFailedError',
      code: 'handler_failed',
      status: 500,
      eventId: event!.event_id,
    });
  });

  it.each<[string, () => unknown, RegExp]>([
    ['a receiver not made by createReceiver', () => createQueueWorker({} as never), /not made by createReceiver/],
    [
      'no queue anywhere',
      () => createQueueWorker(createReceiver({ secrets: { '1': SECRET }, logger: false })),
      /no queue\. Pass `queue` here, or create the receiver with its `queue` option/,
    ],
    [
      'a concurrency of 0',
      () => createQueueWorker(setup().receiver, { concurrency: 0 }),
      /`concurrency` must be a whole number from 1 to 1000/,
    ],
  ])('refuses %s with config_invalid', (_, create, message) => {
    expect(create).toThrow(
      expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(message) }),
    );
  });

  it.each([1, 1000])('takes a concurrency of %i', (concurrency) => {
    expect(() => createQueueWorker(setup().receiver, { concurrency })).not.toThrow();
  });

  it.each([1001, 1.5])('refuses a concurrency of %s with config_invalid', (concurrency) => {
    expect(() => createQueueWorker(setup().receiver, { concurrency })).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message:
          'createQueueWorker: `concurrency` must be a whole number from 1 to 1000 (jobs at once); the default is 4.',
      }),
    );
  });

  it.each([
    [undefined, 4],
    [2, 2],
  ])('subscribes with concurrency %s as %i jobs at once', async (concurrency, expected) => {
    const queue = createMemoryQueue();
    const asked: { concurrency: number }[] = [];
    const work = queue.work.bind(queue);
    queue.work = (handle, options) => {
      asked.push(options);
      return work(handle, options);
    };
    const worker = createQueueWorker(setup({ queue }).receiver, concurrency === undefined ? {} : { concurrency });
    await worker.start();
    await worker.stop();
    expect(asked).toEqual([{ concurrency: expected }]);
  });

  it('refuses a queue option that is not an event queue, naming the fix', () => {
    expect(() => createReceiver({ secrets: { '1': SECRET }, queue: {} as never })).toThrow(
      expect.objectContaining({ code: 'config_invalid', message: expect.stringContaining('createMemoryQueue()') }),
    );
  });
});
