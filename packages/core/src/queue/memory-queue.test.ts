import { describe, expect, it } from 'vitest';
import { createMemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
import { QueueFullError, type QueuedEvent, type QueueJob } from './types.js';

const eventOf = (streamId: string, seq: number, key = `${streamId}:${seq}`): QueuedEvent => ({
  key,
  eventId: key,
  streamId,
  seq,
  type: 'kyb.data_request.pending_approval',
  payload: { envelope: {}, authentication: { hmac: null, attestation: false }, typed: true, receivedAt: 0 },
});

async function until(done: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('createMemoryQueue', () => {
  it('dedupes on the key while it remembers it, and forgets the oldest key first past maxRememberedKeys', async () => {
    const queue = createMemoryQueue({ maxRememberedKeys: 2 });
    expect(await queue.enqueue(eventOf('s', 0))).toBe('enqueued');
    expect(await queue.enqueue(eventOf('s', 0))).toBe('duplicate');
    await queue.enqueue(eventOf('s', 1));
    await queue.enqueue(eventOf('s', 2));
    expect(await queue.enqueue(eventOf('s', 0))).toBe('enqueued');
    expect(await queue.enqueue(eventOf('s', 2))).toBe('duplicate');
  });

  it('refuses past maxBacklog with QueueFullError carrying retryAfterSeconds, and takes jobs again once it drains', async () => {
    const queue = createMemoryQueue({ maxBacklog: 1, retryAfterSeconds: 7 });
    await queue.enqueue(eventOf('a', 0));
    const refused = await queue.enqueue(eventOf('b', 0)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueueFullError);
    expect(refused).toMatchObject({ retryAfterSeconds: 7 });
    const subscription = await queue.work(async () => {}, { concurrency: 1 });
    await until(() => queue.backlog() === 0);
    expect(await queue.enqueue(eventOf('b', 0))).toBe('enqueued');
    await subscription.stop();
  });

  it('hands each job with its attempt, id and enqueue time, and retries with doubling delays', async () => {
    let clock = 1_000;
    const queue = createMemoryQueue({ retryLimit: 2, retryDelayMs: 10, now: () => clock });
    const runs: { job: QueueJob; at: number }[] = [];
    await queue.enqueue(eventOf('s', 0));
    clock = 2_000;
    const started = Date.now();
    const subscription = await queue.work(
      async (job) => {
        runs.push({ job, at: Date.now() - started });
        if (job.attempt < 3) throw new Error('again');
      },
      { concurrency: 1 },
    );
    await until(() => queue.backlog() === 0);
    await subscription.stop();
    expect(runs.map(({ job }) => [job.id, job.attempt, job.enqueuedAt])).toEqual([
      ['1', 1, 1_000],
      ['1', 2, 1_000],
      ['1', 3, 1_000],
    ]);
    // 10 ms, then 20 ms: the third run starts at least 30 ms after the first.
    expect(runs[2]!.at - runs[0]!.at).toBeGreaterThanOrEqual(29);
  });

  it('reports a failure by the code the worker gave, or the error message', async () => {
    const queue = createMemoryQueue({ retryLimit: 0, now: () => 5 });
    await queue.enqueue(eventOf('coded', 0));
    await queue.enqueue(eventOf('plain', 0));
    const subscription = await queue.work(
      (job) =>
        Promise.reject(
          job.event.streamId === 'coded'
            ? Object.assign(new Error('x'), { code: 'store_unavailable' })
            : new Error('boom'),
        ),
      { concurrency: 2 },
    );
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(2);
    await subscription.stop();
    const blocked = await queue.blockedStreams();
    expect(
      blocked.map(({ streamId, error, attempts, blockedAt }) => ({ streamId, error, attempts, blockedAt })),
    ).toEqual([
      { streamId: 'coded', error: 'store_unavailable', attempts: 1, blockedAt: 5 },
      { streamId: 'plain', error: 'boom', attempts: 1, blockedAt: 5 },
    ]);
  });

  it('needs a reason to skip, and answers false for a stream that is not blocked', async () => {
    const queue = createMemoryQueue();
    await expect(queue.skipBlocked('s', { reason: '  ' })).rejects.toThrow(/needs a reason/);
    expect(await queue.skipBlocked('s', { reason: 'ops' })).toBe(false);
    expect(await queue.retryStream('s')).toBe(false);
  });

  it('has one worker at a time, and a stop leaves waiting retries to the next worker, at once', async () => {
    const queue = createMemoryQueue({ retryDelayMs: 60_000 });
    await queue.enqueue(eventOf('s', 0));
    let fail = true;
    const first = await queue.work(
      async () => {
        if (fail) throw new Error('down');
      },
      { concurrency: 1 },
    );
    await expect(queue.work(async () => {}, { concurrency: 1 })).rejects.toThrow(/has a worker already/);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await first.stop();
    fail = false;
    const second = await queue.work(async () => {}, { concurrency: 1 });
    await until(() => queue.backlog() === 0, 500);
    await second.stop();
  });

  it.each([
    [{ retryLimit: -1 }, /`retryLimit` must be a whole number of at least 0/],
    [{ retryDelayMs: 1.5 }, /`retryDelayMs` must be a whole number of ms of at least 0, got a fraction/],
    [{ maxBacklog: 0 }, /`maxBacklog` must be a positive whole number of jobs, got zero/],
    [{ maxRememberedKeys: Number.NaN }, /`maxRememberedKeys` must be a positive whole number of keys, got NaN/],
    [{ retryLimt: 3 }, /did you mean `retryLimit`\?/],
  ])('refuses %j with config_invalid', (options, message) => {
    expect(() => createMemoryQueue(options as MemoryQueueOptions)).toThrow(
      expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(message) }),
    );
  });
});
