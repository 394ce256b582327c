/**
 * The queue conformance suite (queue mode, docs/queue-mode.md): one set of cases every `EventQueue` engine must pass,
 * whether it keeps jobs in memory, PostgreSQL (pg-boss) or Redis (BullMQ). An engine is done when this suite passes.
 */
import type { EventQueue, JobHandler, QueuedEvent, QueueJob } from '@kyb-webhooks/core/queue';
import { afterEach, describe, expect, it } from 'vitest';
import { ulid } from '../ulid.js';

/**
 * One case's queue, fresh and empty.
 *
 * @example
 * ```ts
 * const harness: QueueHarness = { queue: createMemoryQueue({ retryLimit, retryDelayMs: 1 }), cleanup() {} }
 * ```
 */
export interface QueueHarness {
  queue: EventQueue;
  /**
   * A second handle on the same queue, over its own connection: another process of a worker fleet. The order case
   * then runs a worker on each. Without it, one worker runs the case.
   */
  peer?: EventQueue;
  /** Close what the harness opened. */
  cleanup(): void | Promise<void>;
}

/**
 * Options of {@link runQueueConformance}.
 *
 * @example
 * ```ts
 * runQueueConformance('pg-boss', makeQueue, { timeoutMs: 30_000, skip: url ? undefined : 'no PostgreSQL: set KYB_TEST_POSTGRES_URL' })
 * ```
 */
export interface QueueConformanceOptions {
  /** How long a case waits for the queue to do something (a retry, the next job), in ms. Default 20,000. */
  timeoutMs?: number;
  /** When set, the suite is registered as skipped under this message. */
  skip?: string | undefined;
}

/** What a case's queue is made with: the retries before a job is dead-lettered (retry delays as short as it allows). */
export interface QueueCaseSettings {
  retryLimit: number;
}

/** An event as the receiver would enqueue it, on `streamId` at `seq`. */
export function queuedEvent(streamId: string, seq: number): QueuedEvent {
  const eventId = ulid();
  return {
    key: eventId,
    eventId,
    streamId,
    seq,
    type: 'kyb.data_request.pending_approval',
    payload: {
      envelope: { event_id: eventId, stream_id: streamId, seq, event: 'kyb.data_request.pending_approval', data: {} },
      authentication: { hmac: { version: '1' }, attestation: false },
      typed: true,
      receivedAt: Date.now(),
    },
  };
}

/**
 * Registers the conformance cases for one engine with vitest. `makeQueue` runs once per case, and must return an empty
 * queue (a fresh name or namespace) configured with `settings.retryLimit` and the shortest retry delay it allows.
 *
 * @example
 * ```ts
 * import { createMemoryQueue } from '@kyb-webhooks/core/queue'
 * import { runQueueConformance } from '@kyb-webhooks/testing/queue-suite'
 *
 * runQueueConformance('memory queue', async ({ retryLimit }) => ({
 *   queue: createMemoryQueue({ retryLimit, retryDelayMs: 1 }),
 *   cleanup() {},
 * }))
 * ```
 */
export function runQueueConformance(
  name: string,
  makeQueue: (settings: QueueCaseSettings) => Promise<QueueHarness>,
  options: QueueConformanceOptions = {},
): void {
  if (options.skip) {
    describe.skip(`${name}: queue conformance`, () => {
      it(options.skip!, () => {});
    });
    return;
  }
  const timeoutMs = options.timeoutMs ?? 20_000;
  describe(`${name}: queue conformance`, () => {
    const open: { harness: QueueHarness; stops: (() => Promise<void>)[] }[] = [];
    afterEach(async () => {
      for (const { harness, stops } of open.splice(0)) {
        for (const stop of stops) await stop();
        await harness.cleanup();
      }
    });
    const rig = async (settings: QueueCaseSettings) => {
      const harness = await makeQueue(settings);
      const entry = { harness, stops: [] as (() => Promise<void>)[] };
      open.push(entry);
      const work = async (queue: EventQueue, handle: JobHandler, concurrency = 1) => {
        const subscription = await queue.work(handle, { concurrency });
        entry.stops.push(() => subscription.stop());
        return subscription;
      };
      return { ...harness, work };
    };
    const waitFor = (done: () => boolean | Promise<boolean>) => until(done, timeoutMs);
    registerDedupeCases(rig, waitFor);
    registerOrderCases(rig, waitFor);
    registerFailureCases(rig, waitFor);
    registerStopCases(rig, waitFor);
  });
}

type Rig = (settings: QueueCaseSettings) => Promise<
  QueueHarness & {
    work(queue: EventQueue, handle: JobHandler, concurrency?: number): Promise<{ stop(): Promise<void> }>;
  }
>;
type WaitFor = (done: () => boolean | Promise<boolean>) => Promise<void>;

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`the queue did not get there within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function registerDedupeCases(rig: Rig, waitFor: WaitFor): void {
  it('enqueues an event once: the same key again is a duplicate, and one job carries the event as enqueued', async () => {
    const { queue, work } = await rig({ retryLimit: 0 });
    // With the trace context a telemetry layer injected: it must reach the worker too.
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const event: QueuedEvent = { ...queuedEvent(ulid(), 0), trace: { traceparent } };
    expect(await queue.enqueue(event)).toBe('enqueued');
    expect(await queue.enqueue({ ...event })).toBe('duplicate');
    const jobs: QueueJob[] = [];
    await work(queue, async (job) => void jobs.push(job));
    await waitFor(() => jobs.length >= 1);
    await sleep(100);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.event).toEqual(event);
    expect(jobs[0]!.attempt).toBe(1);
    expect(typeof jobs[0]!.id).toBe('string');
    expect(Math.abs(jobs[0]!.enqueuedAt - Date.now())).toBeLessThan(60_000);
  });
}

function registerOrderCases(rig: Rig, waitFor: WaitFor): void {
  it('runs a stream’s jobs one at a time in enqueue order, and different streams side by side, across workers', async () => {
    const { queue, peer, work } = await rig({ retryLimit: 0 });
    const streams = [ulid(), ulid(), ulid()];
    for (let seq = 0; seq < 6; seq++) for (const streamId of streams) await queue.enqueue(queuedEvent(streamId, seq));
    const running = new Set<string>();
    const order = new Map<string, number[]>();
    let overlap = 0;
    let sideBySide = 0;
    const handle: JobHandler = async ({ event }) => {
      if (running.has(event.streamId)) overlap++;
      running.add(event.streamId);
      sideBySide = Math.max(sideBySide, running.size);
      await sleep(5 + (event.seq % 3) * 5);
      order.set(event.streamId, [...(order.get(event.streamId) ?? []), event.seq]);
      running.delete(event.streamId);
    };
    // Two workers of two each when the harness has a second handle (a fleet), else one worker of four.
    await work(queue, handle, peer ? 2 : 4);
    if (peer) await work(peer, handle, 2);
    await waitFor(() => [...order.values()].reduce((sum, seqs) => sum + seqs.length, 0) === 18);
    expect(overlap).toBe(0);
    expect(sideBySide).toBeGreaterThan(1);
    for (const streamId of streams) expect(order.get(streamId)).toEqual([0, 1, 2, 3, 4, 5]);
  });
}

function registerFailureCases(rig: Rig, waitFor: WaitFor): void {
  it('retries a failed job until it succeeds, counting attempts from 1', async () => {
    const { queue, work } = await rig({ retryLimit: 3 });
    await queue.enqueue(queuedEvent(ulid(), 0));
    const attempts: number[] = [];
    await work(queue, async ({ attempt }) => {
      attempts.push(attempt);
      if (attempt < 3) throw new Error('not yet');
    });
    await waitFor(() => attempts.length === 3);
    await sleep(100);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('dead-letters a job past its retries and blocks its stream until skipped with a reason; other streams go on', async () => {
    const { queue, work } = await rig({ retryLimit: 1 });
    const [blockedStream, otherStream] = [ulid(), ulid()];
    const failing = queuedEvent(blockedStream, 0);
    await queue.enqueue(failing);
    await queue.enqueue(queuedEvent(blockedStream, 1));
    await queue.enqueue(queuedEvent(otherStream, 0));
    const done: string[] = [];
    const lastAttempts: boolean[] = [];
    await work(queue, async ({ event, lastAttempt }) => {
      if (event.eventId === failing.eventId) {
        lastAttempts.push(lastAttempt === true);
        throw Object.assign(new Error('handler_failed'), { code: 'handler_failed' });
      }
      done.push(`${event.streamId === blockedStream ? 'blocked' : 'other'}:${event.seq}`);
    });
    await waitFor(async () => (await queue.blockedStreams()).length === 1 && done.includes('other:0'));
    const [blocked] = await queue.blockedStreams();
    expect(blocked).toMatchObject({
      streamId: blockedStream,
      eventId: failing.eventId,
      seq: 0,
      type: failing.type,
      attempts: 2,
      error: 'handler_failed',
    });
    // The run whose failure dead-letters the job is marked as the last (the worker logs its stream as blocked).
    expect(lastAttempts).toEqual([false, true]);
    await sleep(200);
    expect(done).toEqual(['other:0']);
    await expect(queue.skipBlocked(blockedStream, { reason: '' })).rejects.toThrow();
    expect(await queue.skipBlocked(blockedStream, { reason: 'release checked by ops, ticket 42' })).toBe(true);
    await waitFor(() => done.includes('blocked:1'));
    expect(await queue.blockedStreams()).toEqual([]);
    expect(await queue.skipBlocked(blockedStream, { reason: 'again' })).toBe(false);
  });

  it('runs a blocked stream’s job again on retryStream', async () => {
    const { queue, work } = await rig({ retryLimit: 0 });
    const streamId = ulid();
    await queue.enqueue(queuedEvent(streamId, 0));
    await queue.enqueue(queuedEvent(streamId, 1));
    let healthy = false;
    const done: number[] = [];
    const lastAttempts: boolean[] = [];
    await work(queue, async ({ event, lastAttempt }) => {
      if (event.seq === 0) lastAttempts.push(lastAttempt === true);
      if (!healthy) throw new Error('down');
      done.push(event.seq);
    });
    await waitFor(async () => (await queue.blockedStreams()).length === 1);
    healthy = true;
    expect(await queue.retryStream(streamId)).toBe(true);
    await waitFor(() => done.length === 2);
    expect(done).toEqual([0, 1]);
    // retryLimit 0: every run is the last, the one after retryStream included (its retries start over).
    expect(lastAttempts).toEqual([true, true]);
    expect(await queue.retryStream(streamId)).toBe(false);
  });
}

function registerStopCases(rig: Rig, waitFor: WaitFor): void {
  it('stop() lets the running job finish, then takes no more', async () => {
    const { queue, work } = await rig({ retryLimit: 0 });
    const streams = [ulid(), ulid()];
    await queue.enqueue(queuedEvent(streams[0]!, 0));
    let started = 0;
    let finished = 0;
    const subscription = await work(queue, async () => {
      started++;
      await sleep(150);
      finished++;
    });
    await waitFor(() => started === 1);
    await subscription.stop();
    expect(finished).toBe(1);
    await queue.enqueue(queuedEvent(streams[1]!, 0));
    await sleep(300);
    expect(started).toBe(1);
  });
}
