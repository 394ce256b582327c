/**
 * One receiver process of the fleet tests: the Express adapter on a free 127.0.0.1 port, a shared Redis or
 * PostgreSQL dedupe store, and a handler that writes to an append-only ledger when it starts and when it finishes,
 * so the parent can prove "exactly once" and "no 2xx before the handler finished" across processes.
 *
 * Environment: KYB_STORE (redis | postgres), KYB_STORE_URL, KYB_STORE_NAMESPACE (Redis key prefix / SQL table), KYB_SECRET, KYB_LEDGER (file), KYB_LEASE_MS,
 * KYB_HANDLER_MS (how long a handler works), KYB_HANG_PREFIX (handlers of event_ids starting with it never finish:
 * the parent kills this process mid-handler).
 *
 * Ordered mode (the stream scenarios), when KYB_API_URL is set: ordering `enforce` with gaps backfilled from the local
 * KYB service at KYB_API_URL (key KYB_API_KEY), attestations verified (KYB_ATTESTATION_ISSUER, KYB_AUDIENCE,
 * KYB_JWKS_URL), seq starting at KYB_FIRST_SEQ (default 0); instead of the ledger file, each handler appends
 * `{ streamId, seq, eventId, fetched, pid }` to a durable log in the shared store itself: the Redis list
 * `<namespace>_log`, or the PostgreSQL table `<namespace>_log` (see stores.ts).
 */
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createReceiver, type DedupeStore, type ReceiverOptions, streamOrdering } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/express';

const env = process.env;
const ledger = env.KYB_LEDGER!;
const handlerMs = Number(env.KYB_HANDLER_MS ?? 5);
const hangPrefix = env.KYB_HANG_PREFIX;

/** Appends one handler run to the durable log (ordered mode). */
type DurableLog = (entry: Record<string, unknown>) => Promise<void>;

async function openStore(): Promise<{ store: DedupeStore; close(): Promise<void>; log: DurableLog }> {
  if (env.KYB_STORE === 'redis') {
    const { default: Redis } = await import('ioredis');
    const { createRedisStore } = await import('@kyb-webhooks/store-redis');
    // Fail fast while the server is down instead of queueing commands: the receiver must answer 503 at once.
    const client = new Redis(env.KYB_STORE_URL!, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 100,
    });
    client.on('error', () => {});
    const key = `${env.KYB_STORE_NAMESPACE}_log`; // outside the store's key prefix
    return {
      store: createRedisStore({ client, prefix: `${env.KYB_STORE_NAMESPACE}:` }),
      close: async () => void client.disconnect(),
      log: async (entry) => void (await client.rpush(key, JSON.stringify(entry))),
    };
  }
  const { default: pg } = await import('pg');
  const { createPostgresStore } = await import('@kyb-webhooks/store-sql/postgres');
  // 500 ms by default: the fault tests want a store that is down to show at once; KYB_PG_CONNECT_TIMEOUT_MS raises it.
  const pool = new pg.Pool({
    connectionString: env.KYB_STORE_URL,
    max: 8,
    connectionTimeoutMillis: Number(env.KYB_PG_CONNECT_TIMEOUT_MS ?? 500),
  });
  pool.on('error', () => {});
  const logTable = `${env.KYB_STORE_NAMESPACE}_log`;
  return {
    store: createPostgresStore({ pool, table: env.KYB_STORE_NAMESPACE }),
    close: () => pool.end(),
    log: async (entry) =>
      void (await pool.query(`INSERT INTO ${logTable} (entry) VALUES ($1)`, [JSON.stringify(entry)])),
  };
}

function record(eventId: string, phase: 'start' | 'done'): void {
  // One small write with O_APPEND is atomic on Linux, so lines of several processes never interleave.
  appendFileSync(ledger, `${JSON.stringify({ eventId, phase, pid: process.pid, at: Date.now() })}\n`);
}

const { store, log } = await openStore();
const leaseMs = Number(env.KYB_LEASE_MS ?? 60_000);
const ordered = env.KYB_API_URL !== undefined;
let ordering: Pick<ReceiverOptions, 'attestation' | 'ordering'> = {};
if (ordered) {
  const { createKybClient } = await import('@kyb-webhooks/client');
  const client = createKybClient({ baseUrl: env.KYB_API_URL!, apiKey: env.KYB_API_KEY! });
  ordering = {
    attestation: { issuer: env.KYB_ATTESTATION_ISSUER!, audience: env.KYB_AUDIENCE!, jwksUrl: env.KYB_JWKS_URL! },
    ordering: streamOrdering({
      mode: 'enforce',
      firstSeq: env.KYB_FIRST_SEQ === '1' ? 1 : 0,
      fetchEventsAfter: (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal }),
    }),
  };
}
// The deadlines must fit in the lease (handlerTimeoutMs + 2 × storeTimeoutMs < leaseMs): the crash test uses a short one.
const receiver = createReceiver({
  secrets: { '1': env.KYB_SECRET! },
  store,
  leaseMs,
  handlerTimeoutMs: leaseMs / 2,
  storeTimeoutMs: leaseMs / 8,
  ...ordering,
});
receiver.onAny(async (event, context) => {
  if (ordered) {
    // The durable log is the proof: written by the handler, in the shared store, before the event counts as done.
    await new Promise((resolve) => setTimeout(resolve, handlerMs));
    await log({
      streamId: event.stream_id,
      seq: event.seq,
      eventId: event.event_id,
      fetched: context.authentication.fetched === true,
      pid: process.pid,
    });
    return;
  }
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
