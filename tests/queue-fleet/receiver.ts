/**
 * The HTTP receiver process of the queue-mode fleet test: @kyb-webhooks/node on node:http at 127.0.0.1:KYB_PORT (0: a
 * free port), a receiver in queue mode over the engine of engines.ts, answering `200 queued` once the enqueue
 * resolved. Its queue is wrapped to write each enqueue's outcome to the ledger and, for the event the plan marks
 * `kill-receiver-after-enqueue`, to SIGKILL this process right after the job is in the queue and before the answer:
 * the service sees the connection drop and retries, and the retry must be answered `duplicate`.
 *
 * Environment: the EngineEnv of engines.ts, KYB_SECRET, KYB_ATTESTATION_ISSUER, KYB_AUDIENCE, KYB_JWKS_URL,
 * KYB_LEDGER, KYB_PLAN, KYB_PORT, KYB_QUEUE_KEYS (optional: the options of queuePayloadEncryption, as JSON). Prints `READY <port>`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, queuePayloadEncryption, type QueueEncryptionOptions } from '@kyb-webhooks/core';
import type { EventQueue } from '@kyb-webhooks/core/queue';
import { kybWebhooks } from '@kyb-webhooks/node';
import { HTTP_RECEIVER, openEngine } from './engines.js';
import { faultAt, record } from './ledger.js';
import { childEnv, childLogger, reportError } from './child.js';

const env = childEnv;
const ledger = env.KYB_LEDGER;
const { queue } = await openEngine(env, 'receiver', reportError);

const observed: EventQueue = {
  name: queue.name,
  async enqueue(event) {
    const result = await queue.enqueue(event);
    record(ledger, 'enqueue', event.eventId, event.streamId, event.seq, result, process.pid, event.key);
    if (result === 'enqueued' && faultAt(env.KYB_PLAN, event.streamId, event.seq) === 'kill-receiver-after-enqueue') {
      process.kill(process.pid, 'SIGKILL');
    }
    return result;
  },
  work: (handle, options) => queue.work(handle, options),
  blockedStreams: () => queue.blockedStreams(),
  retryStream: (streamId) => queue.retryStream(streamId),
  skipBlocked: (streamId, options) => queue.skipBlocked(streamId, options),
};

const receiver = createReceiver({
  secrets: { '1': env.KYB_SECRET },
  attestation: { issuer: env.KYB_ATTESTATION_ISSUER, audience: env.KYB_AUDIENCE, jwksUrl: env.KYB_JWKS_URL },
  queue: observed,
  ...HTTP_RECEIVER,
  ...(env.KYB_QUEUE_KEYS
    ? { queueEncryption: queuePayloadEncryption(JSON.parse(env.KYB_QUEUE_KEYS) as QueueEncryptionOptions) }
    : {}),
  logger: childLogger,
});

const webhooks = kybWebhooks(receiver);
const server = createServer((req, res) => void webhooks(req, res));
server.listen(Number(env.KYB_PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
