/**
 * One receiver process of the fleet tests: the Express adapter on a free 127.0.0.1 port, a shared Redis or
 * PostgreSQL dedupe store, and a handler that writes to an append-only ledger when it starts and when it finishes,
 * so the parent can prove "exactly once" and "no 2xx before the handler finished" across processes.
 *
 * Environment: KYB_STORE (redis | postgres), KYB_STORE_URL, KYB_STORE_NAMESPACE (Redis key prefix / SQL table), KYB_SECRET, KYB_LEDGER (file), KYB_LEASE_MS,
 * KYB_HANDLER_MS (how long a handler works), KYB_HANG_PREFIX (handlers of event_ids starting with it never finish:
 * the parent kills this process mid-handler).
 */
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createReceiver, type DedupeStore } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/express';

const env = process.env;
const ledger = env.KYB_LEDGER!;
const handlerMs = Number(env.KYB_HANDLER_MS ?? 5);
const hangPrefix = env.KYB_HANG_PREFIX;

async function openStore(): Promise<{ store: DedupeStore; close(): Promise<void> }> {
  if (env.KYB_STORE === 'redis') {
    const { default: Redis } = await import('ioredis');
    const { createRedisStore } = await import('@kyb-webhooks/store-redis');
    // Fail fast while the server is down instead of queueing commands: the receiver must answer 503 at once.
    const client = new Redis(env.KYB_STORE_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
    client.on('error', () => {});
    return { store: createRedisStore({ client, prefix: `${env.KYB_STORE_NAMESPACE}:` }), close: async () => void client.disconnect() };
  }
  const { default: pg } = await import('pg');
  const { createPostgresStore } = await import('@kyb-webhooks/store-sql/postgres');
  const pool = new pg.Pool({ connectionString: env.KYB_STORE_URL, max: 8, connectionTimeoutMillis: 500 });
  pool.on('error', () => {});
  return { store: createPostgresStore({ pool, table: env.KYB_STORE_NAMESPACE }), close: () => pool.end() };
}

function record(eventId: string, phase: 'start' | 'done'): void {
  // One small write with O_APPEND is atomic on Linux, so lines of several processes never interleave.
  appendFileSync(ledger, `${JSON.stringify({ eventId, phase, pid: process.pid, at: Date.now() })}\n`);
}

const { store } = await openStore();
const leaseMs = Number(env.KYB_LEASE_MS ?? 60_000);
// The deadlines must fit in the lease (handlerTimeoutMs + 2 × storeTimeoutMs < leaseMs): the crash test uses a short one.
const receiver = createReceiver({ secrets: { '1': env.KYB_SECRET! }, store, leaseMs, handlerTimeoutMs: leaseMs / 2, storeTimeoutMs: leaseMs / 8 });
receiver.onAny(async (event) => {
  record(event.event_id, 'start');
  if (hangPrefix && event.event_id.startsWith(hangPrefix)) await new Promise(() => {});
  await new Promise((resolve) => setTimeout(resolve, handlerMs));
  record(event.event_id, 'done');
});

const app = express();
app.post('/webhooks/kyb', kybWebhooks(receiver));
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
