import { createMemoryStore, createQueueWorker, createReceiver } from '@kyb-webhooks/core';
import { QueueFullError, type QueueJob } from '@kyb-webhooks/core/queue';
import { createTestSigner, testStream, ulid } from '@kyb-webhooks/testing';
import { queuedEvent } from '@kyb-webhooks/testing/queue-suite';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createBullMqQueue, headJobIdOf, type BullMqQueue, type BullMqQueueOptions } from './index.js';
import { ADVANCE, ENQUEUE } from './scripts.js';
import { connect, dropPrefix, sleep, testNames, until } from './test-helpers.js';

const redis = testService('redis');

describe.skipIf(!redis.url)(`BullMQ queue against Redis ${redis.skipReason ?? ''}`, () => {
  let client: Redis;
  const errors: unknown[] = [];
  const open: { queue: BullMqQueue; prefix: string }[] = [];

  beforeAll(() => {
    client = connect(redis.url!);
  });
  afterEach(async () => {
    for (const { queue, prefix } of open.splice(0)) {
      await queue.close();
      await dropPrefix(client, prefix);
    }
  });
  afterAll(() => client?.disconnect());

  /** A queue of its own for one case (fresh name and prefix), retrying at once. */
  const queueFor = (options: Partial<BullMqQueueOptions> = {}) => {
    const names = testNames();
    const queue = createBullMqQueue({
      connection: client,
      ...names,
      retryDelayMs: 0,
      onError: (error) => void errors.push(error),
      ...options,
    });
    open.push({ queue, prefix: names.prefix });
    return { queue, base: `${names.prefix}:${names.name}:kyb:`, ...names };
  };

  it('enqueues an event as its stream’s head job, with the job id derived from the key, and runs it as attempt 1', async () => {
    const { queue, base } = queueFor();
    const event = queuedEvent(ulid(), 0);
    const before = Date.now();
    expect(await queue.enqueue(event)).toBe('enqueued');
    expect(await client.get(`${base}head:${event.streamId}`)).toBe(headJobIdOf(event.key));
    expect(await queue.backlog()).toBe(1);
    const jobs: QueueJob[] = [];
    await queue.work(async (job) => void jobs.push(job), { concurrency: 1 });
    await until(() => jobs.length === 1);
    expect(jobs[0]).toEqual({
      id: headJobIdOf(event.key),
      event,
      attempt: 1,
      enqueuedAt: expect.any(Number),
      lastAttempt: false,
    });
    expect(Math.abs(jobs[0]!.enqueuedAt - before)).toBeLessThan(5_000);
    // Done: the list, the head marker and the backlog are gone; the dedupe marker stays.
    await until(async () => (await client.exists(`${base}head:${event.streamId}`)) === 0);
    expect(await client.exists(`${base}stream:${event.streamId}`)).toBe(0);
    expect(await client.sismember(`${base}heads`, event.streamId)).toBe(0);
    expect(await queue.backlog()).toBe(0);
    expect(await queue.enqueue({ ...event })).toBe('duplicate');
  });

  it('headJobIdOf: kyb- and the SHA-1 of the key (the Lua scripts derive the same), no ":" for BullMQ', () => {
    // Pinned: a change here would give events already queued a second job id after an upgrade.
    expect(headJobIdOf('evt_1')).toBe('kyb-4db6d79beeb58129d63923239826aa6829186921');
    expect(headJobIdOf('a:b:c')).toMatch(/^kyb-[0-9a-f]{40}$/);
  });

  it('keeps the dedupe marker dedupeRetainSeconds (default 30 days); past it the key enqueues again', async () => {
    const { queue, base } = queueFor();
    const event = queuedEvent(ulid(), 0);
    await queue.enqueue(event);
    const ttl = await client.ttl(`${base}key:${event.key}`);
    expect(ttl).toBeGreaterThan(30 * 24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(30 * 24 * 3600);

    const short = queueFor({ dedupeRetainSeconds: 1 });
    const again = queuedEvent(ulid(), 0);
    expect(await short.queue.enqueue(again)).toBe('enqueued');
    expect(await client.ttl(`${short.base}key:${again.key}`)).toBe(1);
    expect(await short.queue.enqueue({ ...again })).toBe('duplicate');
    await until(async () => (await client.exists(`${short.base}key:${again.key}`)) === 0, 5_000);
    expect(await short.queue.enqueue({ ...again })).toBe('enqueued');
  });

  it('dedupes racing enqueues of one key across connections: exactly one enqueued', async () => {
    const other = connect(redis.url!);
    try {
      const { queue, name, prefix, base } = queueFor();
      const peer = createBullMqQueue({ connection: other, name, prefix });
      const event = queuedEvent(ulid(), 0);
      const outcomes = await Promise.all([1, 2, 3, 4].map((i) => (i % 2 ? queue : peer).enqueue({ ...event })));
      expect(outcomes.filter((o) => o === 'enqueued')).toHaveLength(1);
      expect(await client.llen(`${base}stream:${event.streamId}`)).toBe(1);
      await peer.close();
    } finally {
      other.disconnect();
    }
  });

  it('throws QueueFullError over maxBacklog, answers a duplicate as such even then, and takes events again once drained', async () => {
    const { queue } = queueFor({ maxBacklog: 2, retryAfterSeconds: 7 });
    const [first, second] = [queuedEvent(ulid(), 0), queuedEvent(ulid(), 0)];
    await queue.enqueue(first);
    await queue.enqueue(second);
    const error = await queue.enqueue(queuedEvent(ulid(), 0)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueFullError);
    expect((error as QueueFullError).retryAfterSeconds).toBe(7);
    expect(await queue.enqueue({ ...first })).toBe('duplicate');
    expect(await queue.backlog()).toBe(2);
    const done: string[] = [];
    await queue.work(async ({ event }) => void done.push(event.eventId), { concurrency: 2 });
    await until(async () => (await queue.backlog()) === 0);
    expect(await queue.enqueue(queuedEvent(ulid(), 0))).toBe('enqueued');
  });

  it('recovers a crash between the pop of a done head and the add of the next head’s job', async () => {
    const { queue, base } = queueFor({ recoverIntervalMs: 3_600_000 });
    const streamId = ulid();
    const [done, next] = [queuedEvent(streamId, 0), queuedEvent(streamId, 1)];
    await queue.enqueue(done);
    await queue.enqueue(next);
    // What a worker does after its handler resolved, up to the crash: the pop script, then nothing. (Its BullMQ job
    // would be rerun after its lock expired, find itself stale and re-add the next head; here it is simply gone.)
    const keys = [`${base}stream:${streamId}`, `${base}head:${streamId}`, `${base}heads`, `${base}backlog`];
    await client.eval(ADVANCE, 4, ...keys, headJobIdOf(done.key), streamId);
    await client.del(`${open.at(-1)!.prefix}:${open.at(-1)!.queue.queueName}:${headJobIdOf(done.key)}`);
    expect(await client.get(`${base}head:${streamId}`)).toBe(headJobIdOf(next.key));
    expect(await client.exists(`${open.at(-1)!.prefix}:${queue.queueName}:${headJobIdOf(next.key)}`)).toBe(0);

    expect(await queue.recover()).toBe(1);
    expect(await queue.recover()).toBe(0); // its job exists now
    const seqs: number[] = [];
    await queue.work(async ({ event }) => void seqs.push(event.seq), { concurrency: 1 });
    await until(() => seqs.length === 1);
    await sleep(200);
    expect(seqs).toEqual([1]);
  });

  it('recovers a receiver that died between the enqueue script and the add of the head job: the redelivery is a duplicate', async () => {
    const { queue, base } = queueFor({ recoverIntervalMs: 3_600_000 });
    const event = queuedEvent(ulid(), 0);
    const keys = [`${base}key:${event.key}`, `${base}stream:${event.streamId}`, `${base}head:${event.streamId}`];
    const entry = JSON.stringify({ key: event.key, enqueuedAt: Date.now(), event });
    // The enqueue script as the dead receiver ran it; its BullMQ add never happened.
    const outcome = await client.eval(
      ENQUEUE,
      5,
      ...keys,
      `${base}heads`,
      `${base}backlog`,
      entry,
      60,
      100,
      headJobIdOf(event.key),
      event.streamId,
    );
    expect(outcome).toBe(2);
    expect(await queue.enqueue({ ...event })).toBe('duplicate'); // the service's retry: acknowledged, nothing added
    const seen: QueueJob[] = [];
    await queue.work(async (job) => void seen.push(job), { concurrency: 1 }); // recover() runs at start
    await until(() => seen.length === 1);
    expect(seen[0]!.event).toEqual(event);
  });

  it('a worker recovers such a head at start, and a stale job of a done event runs nothing', async () => {
    const { queue, base, prefix, name } = queueFor({ recoverIntervalMs: 3_600_000 });
    const streamId = ulid();
    const [done, next] = [queuedEvent(streamId, 0), queuedEvent(streamId, 1)];
    await queue.enqueue(done);
    await queue.enqueue(next);
    const keys = [`${base}stream:${streamId}`, `${base}head:${streamId}`, `${base}heads`, `${base}backlog`];
    await client.eval(ADVANCE, 4, ...keys, headJobIdOf(done.key), streamId);
    // done's job is left in BullMQ (a rerun after a lost lock): it must find itself stale.
    const seqs: number[] = [];
    await queue.work(async ({ event }) => void seqs.push(event.seq), { concurrency: 2 });
    await until(() => seqs.length === 1);
    await sleep(300);
    expect(seqs).toEqual([1]);
    expect(await client.exists(`${prefix}:${name}:${headJobIdOf(done.key)}`)).toBe(0);
  });

  it('a job whose worker died mid-run is taken by another worker once its lock expired, and the stream goes on', async () => {
    const dying = connect(redis.url!);
    const { queue, name, prefix } = queueFor({ lockDurationMs: 1_000, stalledIntervalMs: 500 });
    const dead = createBullMqQueue({
      connection: dying,
      name,
      prefix,
      lockDurationMs: 1_000,
      stalledIntervalMs: 500,
      onError: () => {}, // its connection is gone on purpose
    });
    const streamId = ulid();
    await queue.enqueue(queuedEvent(streamId, 0));
    await queue.enqueue(queuedEvent(streamId, 1));
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const deadSubscription = await dead.work(
      async () => {
        started = true;
        await hang; // the process "dies" while its handler runs
      },
      { concurrency: 1 },
    );
    await until(() => started);
    dying.disconnect(); // no lock renewal, no pop, no completion from here
    const runs: { seq: number; attempt: number }[] = [];
    await queue.work(async ({ event, attempt }) => void runs.push({ seq: event.seq, attempt }), { concurrency: 1 });
    await until(() => runs.length === 2, 15_000);
    expect(runs.map((r) => r.seq)).toEqual([0, 1]); // seq 0 ran again (at least once), then the stream went on
    release();
    await deadSubscription.stop().catch(() => {});
    await dead.close().catch(() => {});
  }, 30_000);

  it('blocks a stream past its retries, reports the error’s message when it has no code, and retryStream starts the attempts over', async () => {
    const { queue } = queueFor({ retryLimit: 1 });
    const streamId = ulid();
    const failing = queuedEvent(streamId, 0);
    await queue.enqueue(failing);
    await queue.enqueue(queuedEvent(streamId, 1));
    const attempts: number[] = [];
    let healthy = false;
    const done: number[] = [];
    await queue.work(
      async ({ event, attempt }) => {
        if (event.seq === 0) attempts.push(attempt);
        if (!healthy) throw new Error('the database is down');
        done.push(event.seq);
      },
      { concurrency: 1 },
    );
    await until(async () => (await queue.blockedStreams()).length === 1);
    const [blocked] = await queue.blockedStreams();
    expect(blocked).toMatchObject({
      streamId,
      eventId: failing.eventId,
      seq: 0,
      attempts: 2,
      error: 'the database is down',
    });
    expect(Math.abs(blocked!.blockedAt - Date.now())).toBeLessThan(10_000);
    expect(attempts).toEqual([1, 2]);
    // Retried while still failing: the full retries again, counted from 1.
    expect(await queue.retryStream(streamId)).toBe(true);
    await until(() => attempts.length === 4);
    await until(async () => (await queue.blockedStreams()).length === 1);
    expect(attempts).toEqual([1, 2, 1, 2]);
    expect(await queue.retryStream(ulid())).toBe(false);
    healthy = true;
    expect(await queue.retryStream(streamId)).toBe(true);
    await until(() => done.length === 2);
    expect(done).toEqual([0, 1]);
    expect(attempts.at(-1)).toBe(1);
    expect(await queue.blockedStreams()).toEqual([]);
  });

  it('skipBlocked records the skip in Redis, drops the failed job from BullMQ and runs the next event', async () => {
    const { queue, base, prefix, name } = queueFor({ retryLimit: 0 });
    const streamId = ulid();
    const failing = queuedEvent(streamId, 0);
    await queue.enqueue(failing);
    await queue.enqueue(queuedEvent(streamId, 1));
    const done: number[] = [];
    await queue.work(
      async ({ event }) => {
        if (event.seq === 0) throw Object.assign(new Error('no'), { code: 'store_unavailable' });
        done.push(event.seq);
      },
      { concurrency: 1 },
    );
    await until(async () => (await queue.blockedStreams()).length === 1);
    const outcomes = await Promise.all([
      queue.skipBlocked(streamId, { reason: 'ops, ticket 7' }),
      queue.skipBlocked(streamId, { reason: 'ops, ticket 7 again' }),
      queue.retryStream(streamId),
    ]);
    // Whichever came first won: the others found the stream no longer blocked.
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    if (outcomes[2]) {
      // The retry won (it fails again at once): skip for real now.
      await until(async () => (await queue.blockedStreams()).length === 1);
      expect(await queue.skipBlocked(streamId, { reason: 'ops, ticket 7' })).toBe(true);
    }
    await until(() => done.length === 1);
    expect(done).toEqual([1]);
    expect(await queue.skipped()).toEqual([
      {
        streamId,
        eventId: failing.eventId,
        seq: 0,
        type: failing.type,
        reason: expect.stringMatching(/^ops, ticket 7/),
        error: 'store_unavailable',
        at: expect.any(Number),
      },
    ]);
    expect(await client.llen(`${base}skips`)).toBe(1);
    expect(await client.exists(`${prefix}:${name}:${headJobIdOf(failing.key)}`)).toBe(0);
    await until(async () => (await queue.backlog()) === 0);
  });

  it('runs different streams side by side within one worker’s concurrency', async () => {
    const { queue } = queueFor();
    for (let i = 0; i < 4; i++) await queue.enqueue(queuedEvent(ulid(), 0));
    let running = 0;
    let most = 0;
    let finished = 0;
    await queue.work(
      async () => {
        most = Math.max(most, ++running);
        await sleep(150);
        running--;
        finished++;
      },
      { concurrency: 4 },
    );
    await until(() => finished === 4);
    expect(most).toBeGreaterThan(1);
  });

  it('never closes the caller’s connection', async () => {
    const { queue } = queueFor();
    await queue.enqueue(queuedEvent(ulid(), 0));
    const subscription = await queue.work(async () => {}, { concurrency: 1 });
    await subscription.stop();
    await queue.close();
    expect(await client.ping()).toBe('PONG');
  });

  it('end to end through the core: 200 queued, the handler runs once in the worker', async () => {
    const secrets = { '1': 'bullmq-queue-secret' };
    const signer = await createTestSigner({ secrets });
    const { queue } = queueFor();
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
    await until(() => handled.length === 1);
    await sleep(500);
    await worker.stop();
    expect(handled).toEqual([{ id: event!.event_id, attempt: 1 }]);
  });

  it('left no worker errors behind', () => {
    expect(errors).toEqual([]);
  });
});
