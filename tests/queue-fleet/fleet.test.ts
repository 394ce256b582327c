/**
 * Issue 29 §4, the proof of queue mode, on both engines: pg-boss over PostgreSQL (with the PostgreSQL dedupe store)
 * and BullMQ over Redis (with the Redis dedupe store), each on a server of the test's own that it restarts.
 *
 * Everything goes over real HTTP between real processes: the local KYB service (in this process) signs every delivery
 * with the endpoint's HMAC secret and attests the events as the real service does, and delivers them, with its retry
 * rules, to one HTTP receiver process (@kyb-webhooks/node, queue mode: `200 queued` once the job is in the queue);
 * four worker processes run createQueueWorker over the same queue. Nothing is taken from the workers' word: every
 * handler run, store answer and enqueue is a line in a ledger file (ledger.ts), and the rules are checked from it.
 *
 * At-least-once, as checked here (checks.ts has the rules in full): nothing the receiver acknowledged is lost; a
 * handler run that did not finish runs again (its worker was killed mid-run, it threw, or its completion reached
 * neither the store nor the queue); a run the store recorded complete never runs again, even when the queue runs its
 * job again; and a stream's next event starts only after every run of the one before it ended.
 *
 * 1. A fleet: streams interleaved across four workers, redeliveries by the service and concurrent copies of the same
 *    delivery: every event enqueued once, processed once, every stream in seq order.
 * 2. Crashes: the receiver SIGKILLed between the enqueue and its answer (the service's retry is a `duplicate`); a
 *    worker SIGKILLed after the store's complete and before the queue's job completion (the rerun is a duplicate, the
 *    handler does not run again); a worker SIGKILLed in the middle of a handler (the handler runs again, once, and the
 *    stream waits for it); the queue's server stopped by PID and started again while events flow.
 * 3. Failures: a handler that fails three times then succeeds (its stream waits, then moves on in order); one that
 *    always fails (dead letter, `blockedStreams()` lists it with `handler_failed`, later events wait, skipBlocked with
 *    a reason, and the stream moves on).
 * 4. Encryption: workers with the wrong `queueEncryption` key fail the sealed job with `job_undecryptable`, the stream
 *    is blocked and the job kept; with the right key back and `retryStream`, it runs.
 *
 * Locally a missing PostgreSQL or Redis skips its engine with a message; with CI=true the test run's setup fails
 * instead (scripts/services/global-setup.ts). Every process is stopped by PID in afterAll (rig.stop), or by the
 * watchdog if this process is killed first.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSender, type KybService, type TestEnvelope } from '@kyb-webhooks/testing';
import type { BullMqQueue } from '@kyb-webhooks/queue-bullmq';
import { jobIdOf } from '@kyb-webhooks/queue-pgboss';
import { testService } from '../../scripts/services/env.js';
import { linesOf, runViolations } from './checks.js';
import { QUEUE_NAME, RETRY_LIMIT, type EngineName } from './engines.js';
import { planKey } from './ledger.js';
import { startRig, walletStream, WORKERS, type Rig } from './rig.js';

const ENGINES = [
  { engine: 'pg-boss' as EngineName, kind: 'postgres' as const, service: testService('postgres') },
  { engine: 'BullMQ' as EngineName, kind: 'redis' as const, service: testService('redis') },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Appends `count` wallet changes to the business stream `businessId` (named by the test, so the plan can name it). */
async function emitWallets(kyb: KybService, businessId: string, count: number): Promise<TestEnvelope[]> {
  for (let change = 0; change < count; change++) {
    await kyb.changeBusinessWallet({ businessId, previous: `0x${change}`, next: `0x${change + 1}` });
  }
  return [...kyb.request(businessId)!.events];
}

describe.each(ENGINES)('queue mode over $engine, four worker processes', ({ engine, kind, service }) => {
  let rig: Rig | undefined;
  beforeAll(async () => {
    if (service.url) rig = await startRig(engine, kind);
  }, 120_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  it.skipIf(!service.url)(
    `processes every event once, each stream in order, under redeliveries and concurrent copies ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb } = rig!;
      // Six streams whose every delivery the test doubles with four concurrent copies of its own, each signed afresh
      // like the service's: the service holds their events (no endpoint) until the race starts. The copies of seq
      // N+1 go out once those of N were answered, as the service's own delivery of N+1 waits for its N: a stream's
      // events reach the queue in order whoever wins each race (the queue keeps the order it is given).
      rig!.connect(false);
      const copied = await Promise.all(Array.from({ length: 6 }, (_, index) => walletStream(kyb, `copied${index}`, 8)));
      rig!.connect(true);
      const sender = createTestSender({ url: rig!.fleet.url, signer: rig!.signer, timeoutMs: 15_000 });
      const racing = Promise.all(
        copied.map(async (stream) => {
          const answers = [];
          for (const envelope of stream) {
            answers.push(...(await Promise.all(Array.from({ length: 4 }, () => sender.deliverOnce(envelope)))));
          }
          return answers;
        }),
      );
      // Two more streams at the same time, which the service then redelivers whole (as POST redeliver does).
      const redelivered = await Promise.all([walletStream(kyb, 'again0', 10), walletStream(kyb, 'again1', 10)]);
      for (const stream of redelivered) kyb.redeliver(stream[0]!.stream_id);
      const copies = (await racing).flat();
      const streams = [...copied, ...redelivered];
      const events = streams.flat();
      await rig!.processed('every event of the fleet scenario is processed', events);
      await kyb.idle();
      await rig!.drained();
      expect(await rig!.opened.queue.blockedStreams()).toEqual([]);

      const lines = rig!.lines();
      expect(runViolations(lines, streams, { killed: rig!.fleet.killed })).toEqual([]);
      // Once in effect and once in fact: no process was killed here, so every handler ran exactly once.
      for (const envelope of events) {
        expect(linesOf(lines, envelope.event_id, 'start', 'done').map((line) => line.kind)).toEqual(['start', 'done']);
      }
      // Every copy was answered 200 (queued or duplicate), and each event was enqueued by exactly one of its five
      // deliveries; the redelivered streams' events were enqueued once and came back duplicate.
      expect(copies.filter((copy) => copy.status !== 200 || !['queued', 'duplicate'].includes(copy.code!))).toEqual([]);
      for (const envelope of copied.flat()) {
        const answers = linesOf(lines, envelope.event_id, 'enqueue').map((line) => line.result);
        expect(answers.sort()).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'enqueued']);
      }
      for (const envelope of redelivered.flat()) {
        const answers = linesOf(lines, envelope.event_id, 'enqueue').map((line) => line.result);
        expect(answers).toEqual(['enqueued', 'duplicate']);
      }
      expect(kyb.exhausted).toEqual([]);
      // The runs really were spread over the workers and interleaved across streams.
      const starts = lines.filter((line) => line.kind === 'start');
      expect(new Set(starts.map((line) => line.pid)).size).toBeGreaterThan(1);
      const switches = starts.filter((line, i) => i > 0 && line.streamId !== starts[i - 1]!.streamId).length;
      expect(switches).toBeGreaterThan(streams.length);
    },
  );

  it.skipIf(!service.url)(
    `survives a SIGKILL of the receiver before it answers, and of a worker between complete and the job's end ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb, fleet } = rig!;
      // The plan names the events before they exist: the stream ids are chosen here.
      const receiverDies = `biz_receiver_${engine}`;
      const completeDies = `biz_complete_${engine}`;
      rig!.plan({
        [planKey(receiverDies, 1)]: 'kill-receiver-after-enqueue',
        [planKey(completeDies, 1)]: 'kill-worker-after-complete',
      });
      const receiverPid = fleet.alive('receiver')[0]!.pid;
      const [receiverStream, completeStream, ...others] = await Promise.all([
        emitWallets(kyb, receiverDies, 5),
        emitWallets(kyb, completeDies, 5),
        walletStream(kyb, 'k1', 6),
        walletStream(kyb, 'k2', 6),
      ]);
      const streams = [receiverStream!, completeStream!, ...others];
      await rig!.processed('every event of the crash scenario is processed', streams.flat());
      await kyb.idle();
      await rig!.drained();
      expect(await rig!.opened.queue.blockedStreams()).toEqual([]);
      const lines = rig!.lines();
      expect(runViolations(lines, streams, { killed: fleet.killed })).toEqual([]);

      // The receiver died after the enqueue, before its answer: the service saw no answer and retried, and the
      // restarted receiver (same port) answered duplicate; the event was enqueued once and run once.
      const unanswered = receiverStream![1]!;
      const enqueues = linesOf(lines, unanswered.event_id, 'enqueue');
      expect(enqueues[0]).toMatchObject({ result: 'enqueued', pid: receiverPid });
      expect(enqueues.slice(1).every((line) => line.result === 'duplicate' && line.pid !== receiverPid)).toBe(true);
      expect(fleet.killed.has(receiverPid)).toBe(true);
      const attempts = kyb.attempts(unanswered.stream_id).filter((attempt) => attempt.seq === 1);
      expect(attempts[0]!.status).toBeNull();
      expect(attempts.at(-1)).toMatchObject({ status: 200, responseCode: 'duplicate' });
      expect(attempts.some((attempt) => attempt.responseCode === 'queued')).toBe(false);
      // Run once; or, when the worker killed for the scenario below was running it at that moment, once more by
      // another worker (every start but the last by a killed worker).
      const runs = linesOf(lines, unanswered.event_id, 'start', 'done');
      expect(runs.slice(-2).map((line) => line.kind)).toEqual(['start', 'done']);
      expect(runs.slice(0, -2).every((line) => line.kind === 'start' && fleet.killed.has(line.pid))).toBe(true);

      // The worker died after the store's complete and before the queue heard: the queue ran the job again, the
      // store answered completed (a duplicate), the handler did not run again, and only then did the stream move on.
      const settled = completeStream![1]!;
      const [complete] = linesOf(lines, settled.event_id, 'complete');
      expect(complete).toMatchObject({ result: 'ok' });
      expect(fleet.killed.has(complete!.pid)).toBe(true);
      const rerun = linesOf(lines, settled.event_id, 'claim').find((line) => line.index > complete!.index);
      expect(rerun).toMatchObject({ result: 'completed' });
      expect(rerun!.pid).not.toBe(complete!.pid);
      expect(linesOf(lines, settled.event_id, 'start', 'done').map((line) => line.kind)).toEqual(['start', 'done']);
      expect(linesOf(lines, completeStream![2]!.event_id, 'start')[0]!.index).toBeGreaterThan(rerun!.index);

      expect(kyb.exhausted).toEqual([]);
      // The supervision replaced both (before the next scenario, whose kill must not meet a job this one left).
      await fleet.ready();
      expect(fleet.alive('worker').length).toBe(WORKERS);
    },
  );

  it.skipIf(!service.url)(
    `runs a handler again when its worker is SIGKILLed mid-run, twice, and holds the stream until it finished ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb, fleet } = rig!;
      const hang = `biz_hang_${engine}`;
      // Twice: a second crash of the same job must not dead-letter it while its retries are unused (BullMQ's own
      // maxStalledCount of 1 did; the engine now allows retryLimit + 1 stalls).
      rig!.plan({ [planKey(hang, 2)]: 'hang-twice' });
      const [hangStream, ...others] = await Promise.all([
        emitWallets(kyb, hang, 5),
        walletStream(kyb, 'h1', 6),
        walletStream(kyb, 'h2', 6),
      ]);
      const hung = hangStream![2]!;
      // The test kills the worker whose handler hangs, as soon as the ledger shows the run began; then again.
      const hungPids: number[] = [];
      for (const run of [0, 1]) {
        await rig!.until(`run ${run + 1} of the hanging handler starts`, () => {
          const pid = linesOf(rig!.lines(), hung.event_id, 'start')[run]?.pid ?? 0;
          if (pid !== 0) hungPids[run] = pid;
          return pid !== 0;
        });
        await fleet.kill(hungPids[run]!);
      }
      const hungPid = hungPids[0]!;
      const streams = [hangStream!, ...others];
      await rig!.processed('every event of the mid-handler crash scenario is processed', streams.flat());
      await kyb.idle();
      await rig!.drained();
      expect(await rig!.opened.queue.blockedStreams()).toEqual([]);
      const lines = rig!.lines();
      expect(runViolations(lines, streams, { killed: fleet.killed })).toEqual([]);

      // The handler ran again in another worker after each crash, and finished in the third; the stream's next event
      // waited for it.
      const hungRuns = linesOf(lines, hung.event_id, 'start', 'done');
      expect(hungRuns.map((line) => line.kind)).toEqual(['start', 'start', 'start', 'done']);
      expect(hungRuns[0]!.pid).toBe(hungPid);
      expect(hungRuns[1]!.pid).toBe(hungPids[1]);
      expect(hungRuns[2]!.pid).not.toBe(hungPid);
      expect(hungRuns[2]!.pid).not.toBe(hungPids[1]);
      expect(hungRuns[3]!.pid).toBe(hungRuns[2]!.pid);
      expect(linesOf(lines, hangStream![3]!.event_id, 'start')[0]!.index).toBeGreaterThan(hungRuns[3]!.index);
      expect(kyb.exhausted).toEqual([]);
      await fleet.ready();
      expect(fleet.alive('worker').length).toBe(WORKERS);
    },
  );

  it.skipIf(!service.url)(
    `loses nothing and keeps order when the ${kind} server restarts while events flow ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb, server } = rig!;
      const firstIndex = rig!.lines().length;
      // Four streams of twelve, appended one event per stream every 40 ms, so deliveries go on through the restart.
      const ids = Array.from({ length: 4 }, (_, index) => `biz_restart${index}_${engine}`);
      const emitting = (async () => {
        for (let change = 0; change < 12; change++) {
          for (const businessId of ids) {
            await kyb.changeBusinessWallet({ businessId, previous: `0x${change}`, next: `0x${change + 1}` });
          }
          await sleep(40);
        }
      })();
      await rig!.until(
        'a few events of the restart scenario are processed',
        () =>
          rig!
            .lines()
            .slice(firstIndex)
            .filter((line) => line.kind === 'complete').length >= 8,
      );
      const downFrom = Date.now();
      rig!.note('mark', 'down');
      await server.restart(1_000);
      rig!.note('mark', 'up');
      const upAt = Date.now();
      await emitting;
      const streams = ids.map((id) => [...kyb.request(id)!.events]);
      await rig!.processed('every event of the restart scenario is processed', streams.flat(), 75_000);
      await kyb.idle();
      await rig!.drained();
      expect(await rig!.opened.queue.blockedStreams()).toEqual([]);

      const lines = rig!.lines();
      expect(runViolations(lines, streams, { killed: rig!.fleet.killed })).toEqual([]);
      expect(kyb.exhausted).toEqual([]);
      // Events flowed on both sides of the restart: some ran before it, some were enqueued after it.
      const down = lines.find((line) => line.kind === 'mark' && line.result === 'down')!.index;
      const up = lines.find((line) => line.kind === 'mark' && line.result === 'up')!.index;
      const eventIds = new Set(streams.flat().map((envelope) => envelope.event_id));
      const mine = lines.filter((line) => eventIds.has(line.eventId));
      expect(mine.some((line) => line.kind === 'done' && line.index < down)).toBe(true);
      expect(mine.some((line) => line.kind === 'enqueue' && line.result === 'enqueued' && line.index > up)).toBe(true);
      // The restart was felt: some deliveries made while the server was down were not acknowledged.
      const refused = ids.flatMap((id) =>
        kyb.attempts(id).filter((a) => a.attemptedAt >= downFrom && a.attemptedAt <= upAt && (a.status ?? 0) >= 300),
      );
      expect(refused.length).toBeGreaterThan(0);
    },
  );

  it.skipIf(!service.url)(
    `retries a failing handler with its stream waiting, and dead-letters one that always fails until skipped ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb, opened } = rig!;
      const flaky = `biz_flaky_${engine}`;
      const broken = `biz_broken_${engine}`;
      rig!.plan({ [planKey(flaky, 1)]: 'fail-3', [planKey(broken, 1)]: 'fail-always' });
      const [flakyStream, brokenStream] = await Promise.all([emitWallets(kyb, flaky, 4), emitWallets(kyb, broken, 4)]);

      // Fails three times, then succeeds: four runs of one job (attempts 1 to 4), and only then the stream's seq 2.
      await rig!.processed('the flaky stream is processed', flakyStream!);
      let lines = rig!.lines();
      const flakyRuns = linesOf(lines, flakyStream![1]!.event_id, 'start');
      expect(flakyRuns.map((line) => line.attempt)).toEqual([1, 2, 3, 4]);
      expect(linesOf(lines, flakyStream![1]!.event_id, 'fail').length).toBe(3);

      // Always fails: dead-lettered after RETRY_LIMIT retries, and the stream is listed as blocked.
      const failing = brokenStream![1]!;
      await rig!.until('the broken stream is blocked', async () =>
        (await opened.queue.blockedStreams()).some((blocked) => blocked.streamId === broken),
      );
      const blocked = (await opened.queue.blockedStreams()).find((entry) => entry.streamId === broken);
      expect(blocked).toMatchObject({
        streamId: broken,
        eventId: failing.event_id,
        seq: 1,
        type: 'kyb.business.wallet_address_changed',
        attempts: RETRY_LIMIT + 1,
        error: 'handler_failed',
      });
      // Its later events were acknowledged and enqueued, and wait: a stream emitted after the block is processed
      // meanwhile (the workers are busy), and still nothing of the broken stream's seq 2 or 3 has run.
      const later = await walletStream(kyb, 'after_block', 3);
      await rig!.processed('a stream emitted after the block is processed', later);
      lines = rig!.lines();
      expect(linesOf(lines, failing.event_id, 'start').map((line) => line.attempt)).toEqual(
        Array.from({ length: RETRY_LIMIT + 1 }, (_, i) => i + 1),
      );
      for (const waiting of brokenStream!.slice(2)) {
        expect(linesOf(lines, waiting.event_id, 'enqueue')[0]).toMatchObject({ result: 'enqueued' });
        expect(linesOf(lines, waiting.event_id, 'start')).toEqual([]);
      }

      // The operator skips it with a reason: the stream moves on, in order, and the skipped event never completes.
      const reason = `fleet test: ${failing.event_id} cannot be processed, skipped by the on-call engineer`;
      rig!.note('skip', broken);
      expect(await opened.queue.skipBlocked(broken, { reason })).toBe(true);
      expect(await opened.queue.skipBlocked(broken, { reason })).toBe(false);
      await rig!.processed('the broken stream moves on after the skip', brokenStream!.slice(2));
      await rig!.drained();
      expect((await opened.queue.blockedStreams()).filter((entry) => entry.streamId === broken)).toEqual([]);
      lines = rig!.lines();
      expect(
        runViolations(lines, [flakyStream!, brokenStream!, later], {
          killed: rig!.fleet.killed,
          skipped: new Set([failing.event_id]),
        }),
      ).toEqual([]);
      // Where each engine keeps the reason.
      if (engine === 'BullMQ') {
        const skips = await (opened.queue as BullMqQueue).skipped(10);
        expect(skips.find((skip) => skip.streamId === broken)).toMatchObject({
          eventId: failing.event_id,
          reason,
          error: 'handler_failed',
        });
      } else {
        const key = linesOf(lines, failing.event_id, 'enqueue')[0]!.key!;
        const [job] = await opened.boss!.findJobs(QUEUE_NAME, { id: await jobIdOf(key) });
        expect(job).toMatchObject({ state: 'completed', output: { skipped: { reason } } });
      }
    },
  );

  it.skipIf(!service.url)(
    `keeps a job its worker cannot decrypt (wrong key) dead-lettered, and runs it once the key is back and the stream retried ${service.skipReason ?? ''}`,
    { timeout: 90_000 },
    async () => {
      const { service: kyb, fleet, opened } = rig!;
      // The receiver seals every job with AES-256-GCM under the key id 'fleet'; the workers have another key under
      // that id.
      const right = randomBytes(32).toString('base64');
      const wrong = randomBytes(32).toString('base64');
      const keyed = (key: string) => ({
        KYB_QUEUE_KEYS: JSON.stringify({ keys: { fleet: key }, encryptWith: 'fleet' }),
      });
      await fleet.replace('receiver', keyed(right));
      await fleet.replace('worker', keyed(wrong));
      const sealed = await emitWallets(kyb, `biz_sealed_${engine}`, 3);
      const streamId = sealed[0]!.stream_id;
      await rig!.until('the stream of the job no worker can decrypt is blocked', async () =>
        (await opened.queue.blockedStreams()).some((blocked) => blocked.streamId === streamId),
      );
      const blocked = (await opened.queue.blockedStreams()).find((entry) => entry.streamId === streamId);
      expect(blocked).toMatchObject({
        streamId,
        eventId: sealed[0]!.event_id,
        seq: 0,
        attempts: RETRY_LIMIT + 1,
        error: 'job_undecryptable',
      });
      // Kept, sealed in the queue's storage (nothing of the event's data readable there), and never run.
      let lines = rig!.lines();
      const key = linesOf(lines, sealed[0]!.event_id, 'enqueue')[0]!.key!;
      const stored = await opened.storedPayload(key, streamId);
      expect(stored).toMatchObject({ sealed: { alg: 'A256GCM', kid: 'fleet' } });
      expect(JSON.stringify(stored)).not.toContain('wallet_address');
      for (const envelope of sealed) expect(linesOf(lines, envelope.event_id, 'start')).toEqual([]);

      // The right key back in the workers, and the operator retries the stream: its events run, once, in order, the
      // retried job from attempt 1 again.
      await fleet.replace('worker', keyed(right));
      expect(await opened.queue.retryStream(streamId)).toBe(true);
      await rig!.processed('the retried stream is processed', sealed);
      await kyb.idle();
      await rig!.drained();
      expect(await opened.queue.blockedStreams()).toEqual([]);
      lines = rig!.lines();
      expect(runViolations(lines, [sealed], { killed: fleet.killed })).toEqual([]);
      for (const envelope of sealed) {
        expect(
          linesOf(lines, envelope.event_id, 'start', 'done').map((line) => `${line.kind} ${line.attempt}`),
        ).toEqual(['start 1', 'done 1']);
      }
    },
  );
});
