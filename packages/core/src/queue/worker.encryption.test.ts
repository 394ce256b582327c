import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import type { ReceiverOptions } from '../receiver-types.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createMemoryQueue, type MemoryQueue } from './memory-queue.js';
import type { QueueEncryptionOptions } from './payload-cipher.js';
import { queuePayloadEncryption } from './payload-encryption.js';
import type { EventQueue, QueuedEvent } from './types.js';
import { createQueueWorker } from './worker.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'queue-encryption-secret';
const KEY_A = btoa(String.fromCharCode(...new Uint8Array(32).map((_, index) => index * 7)));
const KEY_B = btoa(String.fromCharCode(...new Uint8Array(32).map((_, index) => 255 - index)));
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** The memory queue, recording every event as the engine is handed it (what a durable engine would store). */
function recordingQueue(queue: MemoryQueue): { queue: EventQueue; stored: QueuedEvent[] } {
  const stored: QueuedEvent[] = [];
  return {
    stored,
    queue: {
      name: queue.name,
      enqueue(event) {
        stored.push(structuredClone(event));
        return queue.enqueue(event);
      },
      work: (handle, options) => queue.work(handle, options),
      blockedStreams: () => queue.blockedStreams(),
      retryStream: (streamId) => queue.retryStream(streamId),
      skipBlocked: (streamId, options) => queue.skipBlocked(streamId, options),
    },
  };
}

/** A receiver as the HTTP process or a worker process builds it, over the shared `queue`. */
function receiverOver(queue: EventQueue, queueEncryption?: QueueEncryptionOptions, logs: LogEntry[] = []) {
  const options: ReceiverOptions = {
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    logger: (entry) => logs.push(entry),
    queue,
    ...(queueEncryption ? { queueEncryption: queuePayloadEncryption(queueEncryption) } : {}),
  };
  return createReceiver(options);
}

async function deliverTo(receiver: ReturnType<typeof createReceiver>, envelope: TestEnvelope) {
  const { headers, body } = await signer.sign(envelope);
  return receiver.receive({ method: 'POST', headers, body });
}

describe('queue mode: payload encryption (queueEncryption)', () => {
  it('stores a release sealed, with none of its answers readable, and the worker runs it with its answers', async () => {
    const memory = createMemoryQueue({ retryDelayMs: 1, now: () => NOW });
    const { queue, stored } = recordingQueue(memory);
    const encryption = { keys: { k1: KEY_A }, encryptWith: 'k1' };
    const http = receiverOver(queue, encryption);
    const [released] = testStream(['kyb.data_request.released']);
    expect(await deliverTo(http, await signer.withAttestation(released!))).toMatchObject({
      status: 200,
      code: 'queued',
    });

    expect(stored).toHaveLength(1);
    const text = JSON.stringify(stored);
    for (const value of ['Jane Doe', 'Rahul Mehta', 'HRB 123456 B', '1980-04-12']) {
      expect(text).not.toContain(value);
    }
    expect(stored[0]).toMatchObject({ eventId: released!.event_id, streamId: released!.stream_id, seq: released!.seq });

    const worker = receiverOver(queue, encryption);
    const seen: string[] = [];
    worker.on('kyb.data_request.released', (event, { answers }) => {
      seen.push(
        `${event.data.request_id}: ${answers
          .byName('director_name')
          .map((answer) => answer.value)
          .join(', ')}`,
      );
    });
    const running = createQueueWorker(worker);
    await running.start();
    await expect.poll(() => memory.backlog()).toBe(0);
    await running.stop();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain(released!.data.request_id as string);
    expect(seen[0]).toContain('Jane Doe');
  });

  it('keeps a job a worker has the wrong key for: blocked with job_undecryptable, logged, and run once the key is right', async () => {
    const queue = createMemoryQueue({ retryDelayMs: 1, retryLimit: 2, now: () => NOW });
    const http = receiverOver(queue, { keys: { k1: KEY_A }, encryptWith: 'k1' });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliverTo(http, event!);

    const logs: LogEntry[] = [];
    const misconfigured = receiverOver(queue, { keys: { k1: KEY_B }, encryptWith: 'k1' }, logs);
    const ran: string[] = [];
    misconfigured.onAny((received) => void ran.push(received.event_id));
    const wrong = createQueueWorker(misconfigured);
    await wrong.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list.length)).toBe(1);
    await wrong.stop();
    expect(ran).toEqual([]);
    expect(await queue.blockedStreams()).toEqual([
      expect.objectContaining({ streamId: event!.stream_id, seq: event!.seq, attempts: 3, error: 'job_undecryptable' }),
    ]);
    const failure = logs.find((entry) => entry.code === 'job_undecryptable');
    expect(failure).toMatchObject({ level: 'error', eventId: event!.event_id, eventType: event!.event });
    expect(failure!.message).toContain('did not decrypt with the key id "k1"');
    for (const key of [KEY_A, KEY_B]) expect(JSON.stringify(logs)).not.toContain(key.slice(0, 12));

    const fixed = receiverOver(queue, { keys: { k1: KEY_A }, encryptWith: 'k1' });
    fixed.onAny((received) => void ran.push(received.event_id));
    const right = createQueueWorker(fixed);
    await right.start();
    expect(await queue.retryStream(event!.stream_id)).toBe(true);
    await expect.poll(() => queue.backlog()).toBe(0);
    await right.stop();
    expect(ran).toEqual([event!.event_id]);
  });

  it('fails a sealed job on a worker whose receiver has no queueEncryption, saying what to set', async () => {
    const queue = createMemoryQueue({ retryDelayMs: 1, retryLimit: 0, now: () => NOW });
    const http = receiverOver(queue, { keys: { k1: KEY_A }, encryptWith: 'k1' });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliverTo(http, event!);
    const logs: LogEntry[] = [];
    const plain = receiverOver(queue, undefined, logs);
    const worker = createQueueWorker(plain);
    await worker.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list[0]?.error)).toBe('job_undecryptable');
    await worker.stop();
    expect(logs.find((entry) => entry.code === 'job_undecryptable')?.message).toContain(
      'is encrypted (key id "k1") and this receiver has no queueEncryption',
    );
  });

  it('refuses an unsealed job while encryption is on (nobody with the key made it), unless allowUnencrypted', async () => {
    const queue = createMemoryQueue({ retryDelayMs: 1, retryLimit: 0, now: () => NOW });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliverTo(receiverOver(queue), event!); // enqueued before encryption was turned on
    const ran: string[] = [];
    const strict = receiverOver(queue, { keys: { k1: KEY_A }, encryptWith: 'k1' });
    strict.onAny((received) => void ran.push(received.event_id));
    const worker = createQueueWorker(strict);
    await worker.start();
    await expect.poll(() => queue.blockedStreams().then((list) => list[0]?.error)).toBe('job_undecryptable');
    await worker.stop();
    expect(ran).toEqual([]);

    const switching = receiverOver(queue, { keys: { k1: KEY_A }, encryptWith: 'k1', allowUnencrypted: true });
    switching.onAny((received) => void ran.push(received.event_id));
    const lenient = createQueueWorker(switching);
    await lenient.start();
    await queue.retryStream(event!.stream_id);
    await expect.poll(() => queue.backlog()).toBe(0);
    await lenient.stop();
    expect(ran).toEqual([event!.event_id]);
  });
});

describe('queuePayloadEncryption and the queueEncryption option', () => {
  function configError(make: () => unknown): KybWebhookError {
    try {
      make();
    } catch (error) {
      expect(error).toBeInstanceOf(KybWebhookError);
      expect((error as KybWebhookError).code).toBe('config_invalid');
      return error as KybWebhookError;
    }
    throw new Error('accepted');
  }

  it.each([
    [
      'a short key',
      { keys: { k1: btoa('sixteen bytes!!!') }, encryptWith: 'k1' },
      "queuePayloadEncryption: `keys['k1']` must be 32 bytes (AES-256), got 16",
    ],
    [
      'an unset key',
      { keys: { k1: undefined }, encryptWith: 'k1' },
      "`keys['k1']` must be base64 text, a Uint8Array or a CryptoKey",
    ],
    ['no keys', { keys: {}, encryptWith: 'k1' }, '`keys` is empty'],
    ['no encryptWith', { keys: { k1: KEY_A } }, '`encryptWith` is missing'],
    [
      'an encryptWith not among the keys',
      { keys: { k1: KEY_A }, encryptWith: 'k2' },
      '`encryptWith` must be one of the key ids in `keys`',
    ],
    ['another library’s name', { keys: { k1: KEY_A }, kid: 'k1' }, 'did you mean `encryptWith`'],
    [
      'a key pasted where its id goes',
      { keys: { [KEY_A]: KEY_A }, encryptWith: 'k1' },
      '`keys` has a key id (the 1st, not shown)',
    ],
  ])('refuses %s at creation, naming the fix and never the key', (_, options, expected) => {
    const error = configError(() => queuePayloadEncryption(options as unknown as QueueEncryptionOptions));
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain(KEY_A.slice(0, 12));
  });

  it('shows no key in what it returns', () => {
    const encryption = queuePayloadEncryption({ keys: { k1: KEY_A }, encryptWith: 'k1' });
    expect(Object.keys(encryption).sort()).toEqual(['cipher', 'encryptWith']);
    expect(JSON.stringify(encryption)).not.toContain(KEY_A.slice(0, 12));
  });

  it.each([
    ['a plain object', { keys: { k1: KEY_A }, encryptWith: 'k1' }],
    ['null', null],
  ])('refuses %s for queueEncryption, naming the function to import', (_, queueEncryption) => {
    const error = configError(() =>
      createReceiver({
        secrets: { '1': SECRET },
        queue: createMemoryQueue(),
        queueEncryption: queueEncryption as never,
      }),
    );
    expect(error.message).toContain('`queueEncryption` must be made by queuePayloadEncryption({ keys, encryptWith })');
    expect(error.message).not.toContain(KEY_A.slice(0, 12));
  });

  it('refuses queueEncryption without a queue', () => {
    const error = configError(() =>
      createReceiver({
        secrets: { '1': SECRET },
        queueEncryption: queuePayloadEncryption({ keys: { k1: KEY_A }, encryptWith: 'k1' }),
      }),
    );
    expect(error.message).toContain('`queueEncryption` seals the payloads of queue mode, but `queue` is not set');
  });
});
