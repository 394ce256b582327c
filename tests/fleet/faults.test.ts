import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type DedupeStore } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/express';
import { createRedisStore } from '@kyb-webhooks/store-redis';
import { createTestSender, createTestSigner, testEvents, ulid, type TestSigner } from '@kyb-webhooks/testing';
import { testService } from '../../scripts/services/env.js';
import { freePort } from '../../scripts/services/ports.js';
import { redis as redisServer } from '../../scripts/services/redis.js';
import type { RunningProcess } from '../../scripts/services/process.js';
import { pool, readLedger, startFleet, startWorker, type Worker } from './fleet.js';

const redisService = testService('redis');
let signer: TestSigner;
let dir: string;
const workers: Worker[] = [];
beforeAll(async () => {
  signer = await createTestSigner();
  dir = mkdtempSync(join(tmpdir(), 'kyb-faults-'));
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  rmSync(dir, { recursive: true, force: true });
});

const secret = () => signer.secrets[signer.currentVersion]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function countsByEvent(ledger: string) {
  const starts = new Map<string, number>();
  const done = new Map<string, number>();
  for (const entry of readLedger(ledger)) {
    if (entry.phase === 'start') starts.set(entry.eventId, (starts.get(entry.eventId) ?? 0) + 1);
    else done.set(entry.eventId, (done.get(entry.eventId) ?? 0) + 1);
  }
  return { starts, done };
}

describe('the Redis server goes down mid-run', () => {
  // A Redis of its own, so that stopping it does not disturb the other tests.
  it.skipIf(!redisService.url)(
    `answers 503 while it is down and processes every event once after it is back ${redisService.skipReason ?? ''}`,
    { timeout: 120_000 },
    async () => {
      const located = redisServer.locate();
      if (!located.ok) throw new Error(located.missing);
      const port = await freePort();
      const serverDir = join(dir, 'redis');
      mkdirSync(serverDir);
      let server: RunningProcess = (await redisServer.start(located.binaries, serverDir, port)).process;
      try {
        const ledger = join(dir, 'down.ledger');
        workers.push(
          ...(await startFleet(2, {
            KYB_STORE: 'redis',
            KYB_STORE_URL: `redis://127.0.0.1:${port}`,
            KYB_STORE_NAMESPACE: 'down',
            KYB_SECRET: secret(),
            KYB_LEDGER: ledger,
            KYB_HANDLER_MS: '20',
          })),
        );
        const senders = workers.slice(-2).map((worker) =>
          createTestSender({
            url: worker.url,
            signer,
            retry: { maxAttempts: 60, baseDelayMs: 50, maxDelayMs: 400 },
            timeoutMs: 5000,
          }),
        );
        const events = Array.from({ length: 300 }, () => testEvents.dataRequestPendingApproval());
        const run = pool(
          events.map((envelope, index) => () => senders[index % 2]!.send(envelope)),
          16,
        );

        while (countsByEvent(ledger).done.size < 60) await sleep(20);
        await server.stop();
        const downAt = Date.now();
        await sleep(1500);
        const upAt = Date.now();
        server = (await redisServer.start(located.binaries, serverDir, port)).process;
        const records = await run;

        expect(records.filter((record) => !record.delivered)).toEqual([]);
        const attempts = senders.flatMap((sender) => sender.attempts);
        const unavailable = attempts.filter((attempt) => attempt.status === 503);
        expect(unavailable.length).toBeGreaterThan(0);
        expect(unavailable.every((attempt) => attempt.code === 'store_unavailable')).toBe(true);
        // Nothing is acknowledged while the store is down unless its handler had already finished.
        const { starts, done } = countsByEvent(ledger);
        const doneAt = new Map(
          readLedger(ledger)
            .filter((entry) => entry.phase === 'done')
            .map((entry) => [entry.eventId, entry.at]),
        );
        // Whole-millisecond clocks on both sides: only a response more than 1 ms before the handler's end is provably early.
        const acknowledgedEarly = attempts.filter(
          (attempt) =>
            attempt.status === 200 && attempt.startedAt + attempt.durationMs + 1 < doneAt.get(attempt.eventId)!,
        );
        expect(acknowledgedEarly).toEqual([]);
        const acknowledgedWhileDown = attempts.filter(
          (attempt) =>
            attempt.status === 200 && attempt.startedAt > downAt + 200 && attempt.startedAt + attempt.durationMs < upAt,
        );
        expect(acknowledgedWhileDown).toEqual([]);
        expect(starts.size).toBe(events.length);
        expect([...starts.values()].every((count) => count === 1)).toBe(true);
        expect([...done.values()].every((count) => count === 1)).toBe(true);
      } finally {
        await server.stop();
      }
    },
  );
});

describe('a receiver process crashes in the middle of a handler', () => {
  it.skipIf(!redisService.url)(
    `lets a later delivery run the handler once the lease expired ${redisService.skipReason ?? ''}`,
    { timeout: 60_000 },
    async () => {
      const ledger = join(dir, 'crash.ledger');
      const envelope = testEvents.dataRequestPendingApproval();
      const common = {
        KYB_STORE: 'redis',
        KYB_STORE_URL: redisService.url!,
        KYB_STORE_NAMESPACE: `crash_${ulid()}`,
        KYB_SECRET: secret(),
        KYB_LEDGER: ledger,
        KYB_LEASE_MS: '1500',
      };
      const doomed = await startWorker({ ...common, KYB_HANG_PREFIX: envelope.event_id });
      const survivor = await startWorker(common);
      workers.push(doomed, survivor);

      const first = createTestSender({ url: doomed.url, signer, retry: { maxAttempts: 1 }, timeoutMs: 10_000 }).send(
        envelope,
      );
      while (!readLedger(ledger).some((entry) => entry.eventId === envelope.event_id)) await sleep(10);
      await doomed.kill();
      expect((await first).delivered).toBe(false);

      const retry = createTestSender({
        url: survivor.url,
        signer,
        retry: { maxAttempts: 20, baseDelayMs: 100, maxDelayMs: 400 },
      });
      const record = await retry.send(envelope);
      expect(record.delivered).toBe(true);
      // Until the dead process's lease ran out, the event was in progress; then the survivor ran the handler.
      expect(record.attempts[0]).toMatchObject({ status: 409, code: 'in_progress' });
      const entries = readLedger(ledger).filter((entry) => entry.eventId === envelope.event_id);
      expect(entries.map((entry) => [entry.phase, entry.pid])).toEqual([
        ['start', doomed.pid],
        ['start', survivor.pid],
        ['done', survivor.pid],
      ]);
    },
  );
});

describe('a handler that outlives its lease', () => {
  it.skipIf(!redisService.url)(
    `keeps its event: another process's retries are in_progress until it finishes, then duplicate ${redisService.skipReason ?? ''}`,
    { timeout: 60_000 },
    async () => {
      const ledger = join(dir, 'overrun.ledger');
      const envelope = testEvents.dataRequestPendingApproval();
      // Lease 1.5 s, handler deadline 0.75 s (worker.ts), and a handler that ignores its signal and works 4.5 s.
      const common = {
        KYB_STORE: 'redis',
        KYB_STORE_URL: redisService.url!,
        KYB_STORE_NAMESPACE: `overrun_${ulid()}`,
        KYB_SECRET: secret(),
        KYB_LEDGER: ledger,
        KYB_LEASE_MS: '1500',
        KYB_HANDLER_MS: '4500',
      };
      const slow = await startWorker(common);
      const other = await startWorker(common);
      workers.push(slow, other);

      const first = await createTestSender({ url: slow.url, signer, retry: { maxAttempts: 1 } }).send(envelope);
      expect(first.attempts).toMatchObject([{ status: 503, code: 'handler_timeout' }]);
      const retry = createTestSender({
        url: other.url,
        signer,
        retry: { maxAttempts: 60, baseDelayMs: 200, maxDelayMs: 200 },
      });
      const record = await retry.send(envelope);
      expect(record.attempts.at(-1)).toMatchObject({ status: 200, code: 'duplicate' });
      // Every retry before that was refused while the first run went on: for about 3.7 s, past the lease twice over.
      const refused = record.attempts.slice(0, -1);
      expect(refused.length).toBeGreaterThanOrEqual(8);
      expect(refused.every((attempt) => attempt.status === 409 && attempt.code === 'in_progress')).toBe(true);
      const entries = readLedger(ledger).filter((entry) => entry.eventId === envelope.event_id);
      expect(entries.map((entry) => [entry.phase, entry.pid])).toEqual([
        ['start', slow.pid],
        ['done', slow.pid],
      ]);
    },
  );
});

describe('a store slower than the sender', () => {
  it.skipIf(!redisService.url)(
    `does not run the handler twice once the slow answers arrive ${redisService.skipReason ?? ''}`,
    { timeout: 60_000 },
    async () => {
      const client = new Redis(redisService.url!);
      const redisStore = createRedisStore({ client, prefix: `slow_${ulid()}:` });
      // Every store call answers after the sender has given up on the delivery.
      const slow = <T>(call: () => T | Promise<T>) => sleep(700).then(call);
      const store: DedupeStore = {
        claim: (id, options) => slow(() => redisStore.claim(id, options)),
        complete: (id, token, options) => slow(() => redisStore.complete(id, token, options)),
        release: (id, token) => slow(() => redisStore.release(id, token)),
      };
      let runs = 0;
      const receiver = createReceiver({ secrets: { ...signer.secrets }, store });
      receiver.onAny(() => {
        runs++;
      });
      const app = express();
      app.post('/webhooks/kyb', kybWebhooks(receiver));
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;
      try {
        const sender = createTestSender({
          url,
          signer,
          retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 300 },
          timeoutMs: 250,
        });
        const record = await sender.send(testEvents.dataRequestRefused());
        expect(record.delivered).toBe(false); // every attempt times out: each answer takes 700 ms or more
        expect(record.attempts.every((attempt) => attempt.error === 'timeout')).toBe(true);
        await sleep(2000); // let every late answer arrive
        expect(runs).toBe(1);

        const patient = createTestSender({ url, signer, timeoutMs: 5000 });
        const again = await patient.send({
          ...testEvents.dataRequestRefused(),
          event_id: record.eventId,
          stream_id: record.streamId,
        });
        expect(again.attempts.at(-1)).toMatchObject({ status: 200, code: 'duplicate' });
        expect(runs).toBe(1);
      } finally {
        server.closeAllConnections();
        server.close();
        client.disconnect();
      }
    },
  );
});
