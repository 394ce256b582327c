import { createMemoryStore, createQueueWorker, createReceiver, KybWebhookError } from '@kyb-webhooks/core';
import { JobFailedError, QueueFullError, type QueueJob } from '@kyb-webhooks/core/queue';
import { createTestSigner, testStream, ulid } from '@kyb-webhooks/testing';
import { queuedEvent } from '@kyb-webhooks/testing/queue-suite';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createPgBossQueue, jobIdOf, type PgBossQueueOptions } from './index.js';
import { sleep, startBoss, stopBosses, testQueueName, testSchema, until } from './test-helpers.js';

const postgres = testService('postgres');

describe.skipIf(!postgres.url)(`pg-boss queue against PostgreSQL ${postgres.skipReason ?? ''}`, () => {
  const schema = testSchema();
  const errors: unknown[] = [];
  let boss: PgBoss;
  let other: PgBoss; // a second process of the fleet: its own instance, its own pool
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    boss = await startBoss(postgres.url!, schema, errors);
    other = await startBoss(postgres.url!, schema, errors);
  });
  afterAll(async () => {
    for (const stop of stops.splice(0)) await stop();
    if (boss) await stopBosses(schema, [boss, other]);
  });

  /** A queue of its own for one case, polling fast (the tests wait on it). */
  const queueFor = (options: Partial<PgBossQueueOptions> = {}, on: PgBoss = boss) =>
    createPgBossQueue({ boss: on, schema, pollingIntervalSeconds: 0.5, retryDelaySeconds: 0, ...options });
  const work = async (
    queue: ReturnType<typeof queueFor>,
    handle: (job: QueueJob) => Promise<void>,
    concurrency = 1,
  ) => {
    const subscription = await queue.work(handle, { concurrency });
    stops.push(() => subscription.stop());
    return subscription;
  };

  it('runs a backlog without waiting the polling interval between jobs: only an empty fetch waits', async () => {
    // An hour between polls: each job after the first must come from the fetch that follows a found job at once
    // (pg-boss's own work() waited the interval after every fetch: one job per slot per interval).
    const queue = queueFor({ name: testQueueName(), pollingIntervalSeconds: 3_600 });
    const events = Array.from({ length: 5 }, () => queuedEvent(ulid(), 0));
    for (const event of events) await queue.enqueue(event);
    const ran: string[] = [];
    await work(queue, async (job) => void ran.push(job.event.eventId));
    await until(() => ran.length === events.length);
    expect(ran.sort()).toEqual(events.map((event) => event.eventId).sort());
  });

  it('enqueues an event and hands it to a worker as attempt 1, with its id and enqueue time', async () => {
    const queue = queueFor({ name: testQueueName() });
    const event = queuedEvent(ulid(), 0);
    const before = Date.now();
    expect(await queue.enqueue(event)).toBe('enqueued');
    const jobs: QueueJob[] = [];
    await work(queue, async (job) => void jobs.push(job));
    await until(() => jobs.length === 1);
    expect(jobs[0]).toEqual({
      id: await jobIdOf(event.key),
      event,
      attempt: 1,
      enqueuedAt: expect.any(Number),
      lastAttempt: false,
    });
    expect(Math.abs(jobs[0]!.enqueuedAt - before)).toBeLessThan(5_000);
    // Completed by pg-boss once the handler resolved.
    await until(async () => (await boss.findJobs(queue.queueName, { id: jobs[0]!.id }))[0]?.state === 'completed');
  });

  it('creates a key_strict_fifo queue with its dead letter queue, idempotently', async () => {
    const queue = queueFor({ name: testQueueName(), retryLimit: 2 });
    await Promise.all([queue.ensureQueues(), queueFor({ name: queue.queueName, retryLimit: 2 }, other).ensureQueues()]);
    await queue.ensureQueues();
    expect(await boss.getQueue(queue.queueName)).toMatchObject({
      policy: 'key_strict_fifo',
      deadLetter: `${queue.queueName}-dead-letter`,
      retryLimit: 2,
    });
    expect(await boss.getQueue(queue.deadLetterQueueName)).toMatchObject({ policy: 'standard' });
  });

  it('pg-boss inserts nothing for a job id it has: send resolves null, so a second enqueue is a duplicate', async () => {
    const queue = queueFor({ name: testQueueName() });
    const event = queuedEvent(ulid(), 0);
    expect(await queue.enqueue(event)).toBe('enqueued');
    expect(await queue.enqueue({ ...event })).toBe('duplicate');
    // Racing copies from several receivers: exactly one job.
    const raced = queuedEvent(ulid(), 0);
    const outcomes = await Promise.all([
      ...Array.from({ length: 4 }, () => queue.enqueue(raced)),
      ...Array.from({ length: 4 }, () => queueFor({ name: queue.queueName }, other).enqueue(raced)),
    ]);
    expect(outcomes.filter((outcome) => outcome === 'enqueued')).toHaveLength(1);
    // pg-boss's own answer to a duplicate id, under the queue: null, and the first job unchanged.
    const id = await jobIdOf(event.key);
    expect(await boss.send(queue.queueName, { other: true }, { id, singletonKey: event.streamId })).toBeNull();
    const stored = await boss.findJobs(queue.queueName, { id });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.data).toEqual({ event });
    // Still a duplicate once the job ran and completed (within deleteAfterSeconds).
    const ran: string[] = [];
    await work(queue, async (job) => void ran.push(job.event.eventId));
    await until(() => ran.length === 2);
    await until(async () => (await boss.findJobs(queue.queueName, { id }))[0]?.state === 'completed');
    expect(await queue.enqueue(event)).toBe('duplicate');
    await sleep(700);
    expect(ran.sort()).toEqual([event.eventId, raced.eventId].sort());
  });

  it('runs a stream’s jobs one at a time in enqueue order across a fleet, and different streams side by side', async () => {
    const name = testQueueName();
    const queue = queueFor({ name });
    const peer = queueFor({ name }, other);
    // More streams than one instance has workers, so both instances of the fleet must take some.
    const streams = Array.from({ length: 6 }, () => ulid());
    const running = new Set<string>();
    const order = new Map<string, number[]>();
    const byInstance = new Set<string>();
    let overlap = 0;
    let sideBySide = 0;
    const handle = (instance: string) => async (job: QueueJob) => {
      const { streamId, seq } = job.event;
      if (running.has(streamId)) overlap++;
      running.add(streamId);
      byInstance.add(instance);
      sideBySide = Math.max(sideBySide, running.size);
      await sleep(40 + (seq % 3) * 20);
      order.set(streamId, [...(order.get(streamId) ?? []), seq]);
      running.delete(streamId);
    };
    await work(queue, handle('boss'), 4);
    await work(peer, handle('other'), 4);
    for (let seq = 0; seq < 4; seq++) for (const streamId of streams) await queue.enqueue(queuedEvent(streamId, seq));
    await until(() => [...order.values()].reduce((sum, seqs) => sum + seqs.length, 0) === 24, 60_000);
    expect(overlap).toBe(0);
    expect(sideBySide).toBeGreaterThan(1);
    expect(byInstance).toEqual(new Set(['boss', 'other']));
    for (const streamId of streams) expect(order.get(streamId)).toEqual([0, 1, 2, 3]);
  }, 90_000);

  it('retries a failing job with backoff: attempts 1, 2, 3, the last one succeeding', async () => {
    const queue = queueFor({ name: testQueueName(), retryLimit: 3, retryDelaySeconds: 1 });
    await queue.enqueue(queuedEvent(ulid(), 0));
    const runs: { attempt: number; at: number }[] = [];
    await work(queue, async ({ attempt }) => {
      runs.push({ attempt, at: Date.now() });
      if (attempt < 3) throw new JobFailedError('handler_failed', 500, 'x');
    });
    await until(() => runs.length === 3, 30_000);
    await sleep(700);
    expect(runs.map((run) => run.attempt)).toEqual([1, 2, 3]);
    // pg-boss's backoff: retryDelay × 2^retryCount × (1 to 2), so at least 1 s, then at least 2 s.
    expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(900);
    expect(runs[2]!.at - runs[1]!.at).toBeGreaterThanOrEqual(1_900);
    expect(await queue.blockedStreams()).toEqual([]);
  }, 40_000);

  it('past the limit: dead-letters the job, lists its stream with the code, holds that stream, runs the others', async () => {
    const queue = queueFor({ name: testQueueName(), retryLimit: 1 });
    const [stuck, free] = [ulid(), ulid()];
    const failing = queuedEvent(stuck, 7);
    const before = Date.now();
    await queue.enqueue(failing);
    await queue.enqueue(queuedEvent(stuck, 8));
    await queue.enqueue(queuedEvent(free, 0));
    const done: string[] = [];
    let healthy = false;
    await work(
      queue,
      async ({ event }) => {
        if (event.eventId === failing.eventId && !healthy)
          throw new JobFailedError('store_unavailable', 503, event.eventId);
        done.push(`${event.streamId === stuck ? 'stuck' : 'free'}:${event.seq}`);
      },
      2,
    );
    await until(async () => (await queue.blockedStreams()).length === 1 && done.includes('free:0'));
    const [blocked] = await queue.blockedStreams();
    expect(blocked).toEqual({
      streamId: stuck,
      eventId: failing.eventId,
      seq: 7,
      type: failing.type,
      attempts: 2,
      error: 'store_unavailable',
      blockedAt: expect.any(Number),
    });
    expect(blocked!.blockedAt).toBeGreaterThanOrEqual(before - 5_000);
    // pg-boss copied it into the dead letter queue.
    const dead = await boss.findJobs(queue.deadLetterQueueName, { key: stuck });
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ data: { event: failing }, sourceName: queue.queueName });
    await queue.enqueue(queuedEvent(free, 1));
    await until(() => done.includes('free:1'));
    await sleep(1_200);
    expect(done).not.toContain('stuck:8'); // held back behind the dead-lettered seq 7

    // skipBlocked: a reason is required, then the stream goes on, and the skip is recorded on the job.
    await expect(queue.skipBlocked(stuck, { reason: '  ' })).rejects.toThrow(/needs a reason/);
    expect(await queue.skipBlocked(stuck, { reason: 'ops: ticket 42, answered by hand' })).toBe(true);
    await until(() => done.includes('stuck:8'));
    expect(done).not.toContain('stuck:7');
    expect(await queue.blockedStreams()).toEqual([]);
    expect(await queue.skipBlocked(stuck, { reason: 'again' })).toBe(false);
    const [skipped] = await boss.findJobs(queue.queueName, { id: await jobIdOf(failing.key) });
    expect(skipped).toMatchObject({
      state: 'completed',
      output: { skipped: { reason: 'ops: ticket 42, answered by hand', lastOutput: { code: 'store_unavailable' } } },
    });
    // The skipped event keeps its job id, so a late copy of it is still a duplicate.
    expect(await queue.enqueue(failing)).toBe('duplicate');
    healthy = true;
  }, 40_000);

  it('retryStream runs the dead-lettered job again with its retries starting over, then its successors', async () => {
    const queue = queueFor({ name: testQueueName(), retryLimit: 1 });
    const streamId = ulid();
    await queue.enqueue(queuedEvent(streamId, 0));
    await queue.enqueue(queuedEvent(streamId, 1));
    let failuresLeft = 3; // two runs, dead-lettered; then one more failure and a success after the retry
    const runs: string[] = [];
    await work(queue, async ({ event, attempt }) => {
      runs.push(`${event.seq}#${attempt}`);
      if (event.seq === 0 && failuresLeft-- > 0) throw new Error('downstream is down');
    });
    await until(async () => (await queue.blockedStreams()).length === 1);
    expect((await queue.blockedStreams())[0]).toMatchObject({ attempts: 2, error: 'downstream is down' });
    expect(await queue.retryStream(ulid())).toBe(false);
    expect(await queue.retryStream(streamId)).toBe(true);
    expect(await queue.retryStream(streamId)).toBe(false); // no longer blocked
    await until(() => runs.includes('1#1'));
    expect(runs).toEqual(['0#1', '0#2', '0#1', '0#2', '1#1']);
    expect(await queue.blockedStreams()).toEqual([]);
  }, 40_000);

  it('pg-boss deletes a dead-lettered job nobody retried or skipped after deleteAfterSeconds, and its stream moves on', async () => {
    // Pinned because it bends the contract ("blocked until retried or skipped"): pg-boss's maintenance deletes failed
    // jobs like completed ones, once deleteAfterSeconds passed. The README says so, and `deleteAfterSeconds: 0` keeps them.
    const queue = queueFor({ name: testQueueName(), retryLimit: 0, deleteAfterSeconds: 1 });
    const streamId = ulid();
    await queue.enqueue(queuedEvent(streamId, 0));
    await queue.enqueue(queuedEvent(streamId, 1));
    const done: number[] = [];
    await work(queue, async ({ event }) => {
      if (event.seq === 0) throw new Error('down');
      done.push(event.seq);
    });
    await until(async () => (await queue.blockedStreams()).length === 1);
    await sleep(1_500);
    await boss.supervise(queue.queueName); // the maintenance pass the background timer would run
    await until(() => done.includes(1));
    expect(await queue.blockedStreams()).toEqual([]);
    expect(await boss.findJobs(queue.deadLetterQueueName, { key: streamId })).toHaveLength(1); // the copy stays
  }, 30_000);

  it('refuses an enqueue over maxBacklog with QueueFullError(retryAfterSeconds); a duplicate is still a duplicate', async () => {
    const queue = queueFor({ name: testQueueName(), maxBacklog: 3, retryAfterSeconds: 17 });
    const events = [0, 1, 2].map((seq) => queuedEvent(ulid(), seq));
    for (const event of events) expect(await queue.enqueue(event)).toBe('enqueued');
    const refused = await queue.enqueue(queuedEvent(ulid(), 0)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueueFullError);
    expect((refused as QueueFullError).retryAfterSeconds).toBe(17);
    expect(await queue.enqueue(events[1]!)).toBe('duplicate');
    // Another process's handle counts the same jobs in PostgreSQL.
    await expect(
      queueFor({ name: queue.queueName, maxBacklog: 3 }, other).enqueue(queuedEvent(ulid(), 0)),
    ).rejects.toBeInstanceOf(QueueFullError);
    // Once the worker drained them (and the cached count expired), it takes events again.
    const ran: number[] = [];
    await work(queue, async ({ event }) => void ran.push(event.seq), 3);
    await until(() => ran.length === 3);
    await until(async () => (await boss.findJobs(queue.queueName, { queued: true })).length === 0);
    await sleep(1_100);
    expect(await queue.enqueue(queuedEvent(ulid(), 0))).toBe('enqueued');
  }, 30_000);

  it('stop() lets the running job finish and takes no more; it stops only its own subscription', async () => {
    const name = testQueueName();
    const queue = queueFor({ name });
    await queue.enqueue(queuedEvent(ulid(), 0));
    let started = 0;
    let finished = 0;
    const subscription = await queue.work(
      async () => {
        started++;
        await sleep(300);
        finished++;
      },
      { concurrency: 2 },
    );
    const peerRan: string[] = [];
    await work(queueFor({ name }, boss), async ({ event }) => void peerRan.push(event.streamId));
    await until(() => started === 1);
    await subscription.stop();
    expect(finished).toBe(1);
    const later = queuedEvent(ulid(), 0);
    await queue.enqueue(later);
    await until(() => peerRan.includes(later.streamId)); // the other subscription on the same instance goes on
    expect(started).toBe(1);
  }, 30_000);

  it('refuses an existing queue of another policy, and a schema without pg-boss, with config_invalid', async () => {
    const name = testQueueName();
    await boss.createQueue(name, { policy: 'standard' });
    const error = await queueFor({ name })
      .ensureQueues()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KybWebhookError);
    expect((error as KybWebhookError).code).toBe('config_invalid');
    expect((error as Error).message).toContain("'key_strict_fifo'");
    const wrongSchema = createPgBossQueue({ boss, name: testQueueName(), schema: 'no_such_schema' });
    await expect(wrongSchema.enqueue(queuedEvent(ulid(), 0))).rejects.toThrow(/Set `schema` to the `schema` option/);
  });

  it('end to end through the core: 200 queued, the handler runs once in the worker', async () => {
    const secrets = { '1': 'pg-boss-queue-secret' };
    const signer = await createTestSigner({ secrets });
    const queue = queueFor({ name: testQueueName() });
    const receiver = createReceiver({
      secrets,
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      store: createMemoryStore(),
      logger: false,
      queue,
    });
    const handled: { id: string; attempt: number | undefined }[] = [];
    receiver.on('kyb.data_request.pending_approval', async (event, { job }) => {
      handled.push({ id: event.event_id, attempt: job?.attempt });
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const deliver = async () => {
      const { headers, body } = await signer.sign(event!);
      return receiver.receive({ method: 'POST', headers, body });
    };
    expect(await deliver()).toMatchObject({ status: 200, code: 'queued' });
    expect(await deliver()).toMatchObject({ status: 200, code: 'duplicate' });
    expect(handled).toEqual([]); // nothing runs in the receiver
    const worker = createQueueWorker(receiver, { concurrency: 2 });
    await worker.start();
    stops.push(() => worker.stop());
    await until(() => handled.length === 1);
    await sleep(1_200);
    await worker.stop();
    expect(handled).toEqual([{ id: event!.event_id, attempt: 1 }]);
  }, 30_000);

  it('left no pg-boss errors behind', () => {
    expect(errors).toEqual([]);
  });
});
