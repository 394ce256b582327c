/**
 * A worker process of the queue-mode fleet test: createQueueWorker over the engine of engines.ts, running a handler
 * that writes `start` and `done` lines to the ledger (ledger.ts), and a dedupe store (the engine's) wrapped to write
 * what each claim, complete and release answered.
 *
 * Faults, from the plan (by stream and seq): `hang-once` (the first run of the handler never returns: the test
 * SIGKILLs this process), `fail-3` (the first three runs throw), `fail-always`, and `kill-worker-after-complete` (this
 * process SIGKILLs itself right after the store's complete resolved, so the queue never hears the job succeeded).
 *
 * Environment: the EngineEnv of engines.ts, KYB_SECRET, KYB_ATTESTATION_ISSUER, KYB_AUDIENCE, KYB_JWKS_URL,
 * KYB_LEDGER, KYB_PLAN, KYB_CONCURRENCY, KYB_QUEUE_KEYS (optional: the options of queuePayloadEncryption, as JSON). Prints `READY <pid>`
 * once it takes jobs.
 */
import {
  createQueueWorker,
  createReceiver,
  queuePayloadEncryption,
  type DedupeStore,
  type QueueEncryptionOptions,
} from '@kyb-webhooks/core';
import { childEnv, childLogger, reportError } from './child.js';
import { openEngine, WORKER_RECEIVER } from './engines.js';
import { countLines, faultAt, record } from './ledger.js';

const env = childEnv;
const ledger = env.KYB_LEDGER;
const pid = process.pid;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { queue, store } = await openEngine(env, 'worker', reportError);

/** Events whose complete this process must not survive (kill-worker-after-complete). */
const killAfterComplete = new Set<string>();

/**
 * Calls the store and writes what it answered. The store's key is the event's dedupe key: its event id, or, for an
 * attested type whose token signs no type (a wallet change), `<event_id>:<type>`; the ledger names the event id.
 */
async function observe<T>(kind: string, key: string, call: () => T | Promise<T>, word: (value: T) => string) {
  const eventId = eventIdOf(key);
  let value: T;
  try {
    value = await call();
  } catch (error) {
    record(ledger, kind, eventId, 'error', pid);
    throw error;
  }
  record(ledger, kind, eventId, word(value), pid);
  return value;
}

const eventIdOf = (key: string) => key.split(':')[0]!;

const observedStore: DedupeStore = {
  claim: (key, options) =>
    observe(
      'claim',
      key,
      () => store.claim(key, options),
      (claim) => claim.status,
    ),
  async complete(key, token, options) {
    const completed = await observe(
      'complete',
      key,
      () => store.complete(key, token, options),
      (ok) => (ok ? 'ok' : 'lost'),
    );
    // Crash between the store's complete and the queue's job completion: the job runs again, and must be a duplicate.
    if (completed && killAfterComplete.has(eventIdOf(key))) process.kill(pid, 'SIGKILL');
    return completed;
  },
  release: (key, token) =>
    observe(
      'release',
      key,
      () => store.release(key, token),
      (ok) => (ok ? 'ok' : 'lost'),
    ),
};

const receiver = createReceiver({
  secrets: { '1': env.KYB_SECRET },
  attestation: { issuer: env.KYB_ATTESTATION_ISSUER, audience: env.KYB_AUDIENCE, jwksUrl: env.KYB_JWKS_URL },
  store: observedStore,
  queue,
  ...WORKER_RECEIVER,
  ...(env.KYB_QUEUE_KEYS
    ? { queueEncryption: queuePayloadEncryption(JSON.parse(env.KYB_QUEUE_KEYS) as QueueEncryptionOptions) }
    : {}),
  logger: childLogger,
});

receiver.onAny(async (event, context) => {
  const words = [event.event_id, event.stream_id, event.seq, pid, context.job?.attempt ?? 0];
  const fault = faultAt(env.KYB_PLAN, event.stream_id, event.seq);
  const runsBefore = countLines(ledger, `start ${event.event_id} `);
  record(ledger, 'start', ...words);
  if ((fault === 'hang-once' && runsBefore === 0) || (fault === 'hang-twice' && runsBefore < 2)) {
    await new Promise(() => {});
  }
  if (fault === 'fail-always' || (fault === 'fail-3' && runsBefore < 3)) {
    record(ledger, 'fail', ...words);
    throw new Error(`planned failure (${fault}, run ${runsBefore + 1})`);
  }
  if (fault === 'kill-worker-after-complete') killAfterComplete.add(event.event_id);
  await sleep(3); // a little work, so that runs of different streams overlap
  record(ledger, 'done', ...words);
});

const worker = createQueueWorker(receiver, { concurrency: Number(env.KYB_CONCURRENCY ?? 3) });
// A worker started while the server restarts waits for it: start() forgets a failed subscription and can be retried.
for (;;) {
  try {
    await worker.start();
    break;
  } catch (error) {
    reportError(error);
    await sleep(250);
  }
}
process.stdout.write(`READY ${pid}\n`);
// Asked to stop (the test replaces its workers): stop taking jobs, let the running ones finish, then exit.
process.once('SIGTERM', () => void worker.stop().finally(() => process.exit(0)));
