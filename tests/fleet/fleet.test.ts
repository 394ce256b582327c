import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSender, createTestSigner, testEvents, ulid, type TestSigner } from '@kyb-webhooks/testing';
import { testService } from '../../scripts/services/env.js';
import { pool, readLedger, startFleet, type Worker } from './fleet.js';
import { prepareStore } from './stores.js';

// Four receiver processes share one store; 1,000 events are each delivered three times, concurrently, spread across
// the processes. Every handler must run exactly once, every event be acknowledged, and no delivery get a 2xx before
// the handler of its event finished.
const EVENTS = 1000;
const DELIVERIES = 3;

let signer: TestSigner;
let dir: string;
beforeAll(async () => {
  signer = await createTestSigner();
  dir = mkdtempSync(join(tmpdir(), 'kyb-fleet-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['Redis', testService('redis'), 'redis'],
  ['PostgreSQL', testService('postgres'), 'postgres'],
] as const)('a fleet of four receivers sharing %s', (_title, service, kind) => {
  let workers: Worker[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill()));
  });

  it.skipIf(!service.url)(
    `runs each of ${EVENTS} events exactly once under ${DELIVERIES} concurrent deliveries ${service.skipReason ?? ''}`,
    { timeout: 180_000 },
    async () => {
      const namespace = `fleet_${ulid().toLowerCase()}`;
      await prepareStore(kind, service.url!, namespace);
      const ledger = join(dir, `${namespace}.ledger`);
      workers = await startFleet(4, {
        KYB_STORE: kind,
        KYB_STORE_URL: service.url!,
        KYB_STORE_NAMESPACE: namespace,
        KYB_SECRET: signer.secrets[signer.currentVersion]!,
        KYB_LEDGER: ledger,
        KYB_HANDLER_MS: '5',
        // This test is about concurrency, not store faults (faults.test.ts): on a loaded 2-core machine a new
        // PostgreSQL connection can take more than the workers' default 500 ms, and a complete() that fails that way
        // holds its event for the whole lease, longer than the senders retry.
        KYB_PG_CONNECT_TIMEOUT_MS: '5000',
      });
      const senders = workers.map((worker) =>
        createTestSender({
          url: worker.url,
          signer,
          retry: { maxAttempts: 30, baseDelayMs: 20, maxDelayMs: 300 },
          timeoutMs: 10_000,
        }),
      );
      const events = Array.from({ length: EVENTS }, () => testEvents.dataRequestPendingApproval());
      const deliveries = events.flatMap((envelope, index) =>
        Array.from({ length: DELIVERIES }, (_, copy) => () => senders[(index + copy) % senders.length]!.send(envelope)),
      );
      // Shuffle so copies of one event race each other across processes instead of arriving back to back.
      for (let i = deliveries.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
      }
      const records = await pool(deliveries, 64);

      expect(records.filter((record) => !record.delivered)).toEqual([]);
      const entries = readLedger(ledger);
      const starts = new Map<string, number>();
      const done = new Map<string, number>();
      for (const entry of entries) {
        if (entry.phase === 'start') starts.set(entry.eventId, (starts.get(entry.eventId) ?? 0) + 1);
        else done.set(entry.eventId, entry.at);
      }
      expect(starts.size).toBe(EVENTS);
      expect([...starts.values()].filter((count) => count !== 1)).toEqual([]);
      expect(done.size).toBe(EVENTS);
      // The handlers really ran in several processes.
      expect(new Set(entries.map((entry) => entry.pid)).size).toBe(workers.length);

      const attempts = senders.flatMap((sender) => sender.attempts);
      const acknowledged = attempts.filter(
        (attempt) => attempt.status !== null && attempt.status >= 200 && attempt.status < 300,
      );
      expect(acknowledged.length).toBe(EVENTS * DELIVERIES);
      // startedAt and the ledger are whole milliseconds (Date.now floors), so a response within 1 ms of the
      // handler's end is not provably early; anything earlier is.
      const early = acknowledged.filter(
        (attempt) => attempt.startedAt + attempt.durationMs + 1 < done.get(attempt.eventId)!,
      );
      expect(early).toEqual([]);
      const firsts = acknowledged.filter((attempt) => attempt.code === undefined);
      expect(firsts.length).toBe(EVENTS);
      expect(new Set(attempts.map((attempt) => attempt.status))).toEqual(
        new Set([200, ...(attempts.some((a) => a.status === 409) ? [409] : [])]),
      );
    },
  );
});
