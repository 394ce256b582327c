import { afterEach, describe, expect, it, vi } from 'vitest';
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
    expect(refused).toMatchObject({
      name: 'QueueFullError',
      message: 'the queue is over its backlog limit; retry after 7 s',
      retryAfterSeconds: 7,
    });
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

  it.each([
    ['null', null, 'null'],
    ['a string', 'timeout', 'timeout'],
  ])('reports a failure that is not an Error (%s) by its text', async (_, thrown, expected) => {
    const queue = createMemoryQueue({ retryLimit: 0 });
    await queue.enqueue(eventOf('s', 0));
    const subscription = await queue.work(() => Promise.reject(thrown), { concurrency: 1 });
    await expect.poll(() => queue.blockedStreams().then((list) => list.map(({ error }) => error))).toEqual([expected]);
    await subscription.stop();
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
    [
      { retryDelayMs: 1.5 },
      /`retryDelayMs` must be a whole number of milliseconds from 0 to 2147483647 .*got a fraction/,
    ],
    [
      { retryDelayMs: 2 ** 31 },
      /`retryDelayMs` must be .* to 2147483647 \(about 24\.8 days, the longest delay a timer keeps\)/,
    ],
    [{ maxBacklog: 0 }, /`maxBacklog` must be a positive whole number of jobs, got zero/],
    [{ maxRememberedKeys: Number.NaN }, /`maxRememberedKeys` must be a positive whole number of keys, got NaN/],
    [{ retryAfterSeconds: 0 }, /`retryAfterSeconds` must be a positive whole number of seconds, got zero/],
    [
      { now: 5 },
      /^createMemoryQueue: `now` must be a function \(a clock in milliseconds, like Date\.now\), got a number/,
    ],
    [
      null,
      /^createMemoryQueue needs an options object, e\.g\. createMemoryQueue\(\{ retryLimit: 3, retryDelayMs: 500 \}\); got null/,
    ],
    [{ retryLimt: 3 }, /did you mean `retryLimit`\?/],
  ])('refuses %j with config_invalid', (options, message) => {
    expect(() => createMemoryQueue(options as MemoryQueueOptions)).toThrow(
      expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(message) }),
    );
  });
});

/** A handler that records the jobs it starts and holds each one until the test releases it. */
function heldHandler() {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  let running = 0;
  let mostAtOnce = 0;
  const handle = async (job: QueueJob) => {
    started.push(job.event.eventId);
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => releases.set(job.event.eventId, resolve));
    running--;
  };
  const release = async (eventId: string) => {
    await until(() => releases.has(eventId));
    releases.get(eventId)!();
  };
  return { handle, started, release, mostAtOnce: () => mostAtOnce };
}

describe('createMemoryQueue: running jobs', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([1, 2])('runs at most %i jobs at once, however many streams wait', async (concurrency) => {
    const queue = createMemoryQueue();
    const held = heldHandler();
    for (const streamId of ['a', 'b', 'c', 'd']) await queue.enqueue(eventOf(streamId, 0));
    const subscription = await queue.work(held.handle, { concurrency });
    for (const streamId of ['a', 'b', 'c', 'd']) await held.release(`${streamId}:0`);
    await until(() => queue.backlog() === 0);
    await subscription.stop();
    expect(held.started).toEqual(['a:0', 'b:0', 'c:0', 'd:0']);
    expect(held.mostAtOnce()).toBe(concurrency);
  });

  it('puts a stream that drained behind the streams already waiting when it gets a job again', async () => {
    const queue = createMemoryQueue();
    const held = heldHandler();
    const subscription = await queue.work(held.handle, { concurrency: 1 });
    await queue.enqueue(eventOf('a', 0));
    await queue.enqueue(eventOf('b', 0));
    await held.release('a:0'); // stream a is drained; b runs
    await until(() => held.started.includes('b:0'));
    await queue.enqueue(eventOf('c', 0));
    await queue.enqueue(eventOf('a', 1));
    await held.release('b:0');
    await held.release('c:0');
    await held.release('a:1');
    await until(() => queue.backlog() === 0);
    await subscription.stop();
    expect(held.started).toEqual(['a:0', 'b:0', 'c:0', 'a:1']);
  });

  it('puts a stream whose blocked job was skipped behind the streams already waiting when it gets a job again', async () => {
    const queue = createMemoryQueue({ retryLimit: 0 });
    const held = heldHandler();
    const subscription = await queue.work(
      (job) =>
        job.event.streamId === 'a' && job.event.seq === 0 ? Promise.reject(new Error('down')) : held.handle(job),
      { concurrency: 1 },
    );
    await queue.enqueue(eventOf('a', 0));
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(1);
    await queue.enqueue(eventOf('b', 0));
    await until(() => held.started.includes('b:0'));
    expect(await queue.skipBlocked('a', { reason: 'ops: replayed by hand' })).toBe(true);
    await queue.enqueue(eventOf('c', 0));
    await queue.enqueue(eventOf('a', 1));
    await held.release('b:0');
    await held.release('c:0');
    await held.release('a:1');
    await until(() => queue.backlog() === 0);
    await subscription.stop();
    expect(held.started).toEqual(['b:0', 'c:0', 'a:1']);
    expect(queue.skipped()).toEqual([{ streamId: 'a', eventId: 'a:0', seq: 0, reason: 'ops: replayed by hand' }]);
  });

  /** One event whose handler always fails: the attempts it was run with, in order. */
  async function failingForever(queue: ReturnType<typeof createMemoryQueue>) {
    const attempts: number[] = [];
    await queue.enqueue(eventOf('s', 0));
    const subscription = await queue.work(
      (job) => {
        attempts.push(job.attempt);
        return Promise.reject(new Error('down'));
      },
      { concurrency: 1 },
    );
    return { attempts, subscription };
  }

  it('waits retryDelayMs before the first retry and twice as long before each next one', async () => {
    vi.useFakeTimers();
    const queue = createMemoryQueue({ retryLimit: 3, retryDelayMs: 100 });
    const { attempts, subscription } = await failingForever(queue);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts).toEqual([1]);
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(199);
    expect(attempts).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual([1, 2, 3]);
    await vi.advanceTimersByTimeAsync(400);
    expect(attempts).toEqual([1, 2, 3, 4]);
    await subscription.stop();
  });

  it('waits at most the longest delay a timer keeps, never retrying at once when the doubling passes it', async () => {
    // 2³⁰ ms, then 2³¹ ms: past 2³¹ − 1 Node would fire the timer after 1 ms.
    vi.useFakeTimers();
    const queue = createMemoryQueue({ retryLimit: 3, retryDelayMs: 2 ** 30 });
    const { attempts, subscription } = await failingForever(queue);
    await vi.advanceTimersByTimeAsync(2 ** 30);
    expect(attempts).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1 - 60_000);
    expect(attempts).toEqual([1, 2, 3]);
    await subscription.stop();
  });

  it('leaves no retry timer running once stopped', async () => {
    vi.useFakeTimers();
    const queue = createMemoryQueue({ retryDelayMs: 60_000 });
    await queue.enqueue(eventOf('s', 0));
    const subscription = await queue.work(() => Promise.reject(new Error('down')), { concurrency: 1 });
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    await subscription.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    ['no options', undefined],
    ['no reason', {}],
    ['a reason that is not text', { reason: 42 }],
  ])('refuses a skip with %s, needing a reason', async (_, options) => {
    const queue = createMemoryQueue();
    await expect(queue.skipBlocked('s', options as never)).rejects.toThrow(
      new TypeError('skipBlocked needs a reason: who decided to skip the event, and why'),
    );
  });
});
