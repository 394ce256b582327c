/*
 * Queue mode's payload encryption (docs/queue-mode.md, "What is stored where"). A job's payload holds the verified
 * envelope and the attestation claims, a release's answers among them: personal data, at rest in the queue's tables
 * until the job is done. With the receiver's `queueEncryption` option the receiver seals the payload with AES-256-GCM
 * (WebCrypto, so every runtime the core runs on) before it enqueues, and the worker opens it before the handlers run.
 *
 * The job's ids (key, event id, stream, seq, type) stay readable, as the queue dedupes and orders by them; they are
 * bound to the ciphertext as additional authenticated data, so a sealed payload cannot be moved to another job nor
 * its ids changed without the worker refusing it. GCM also authenticates: with encryption on, a job nobody sealed
 * with your key (one written into the queue's tables by hand) is refused unless `allowUnencrypted` says otherwise.
 */
import { encode as encodeBase64url } from 'jose/base64url';
import { KybWebhookError } from '../errors.js';
import { decodeBase64url } from '../verify/base64url.js';
import type { QueuedEvent, QueuedPayload, SealedPayload } from './types.js';

/**
 * What {@link queuePayloadEncryption} takes: the keys job payloads are sealed and opened with.
 *
 * @example
 * ```ts
 * // openssl rand -base64 32 → KYB_QUEUE_KEY_2026_11
 * const queueEncryption: QueueEncryptionOptions = {
 *   keys: { '2026-11': process.env.KYB_QUEUE_KEY_2026_11!, '2026-05': process.env.KYB_QUEUE_KEY_2026_05! },
 *   encryptWith: '2026-11',
 * }
 * ```
 */
export interface QueueEncryptionOptions {
  /**
   * AES-256 keys by key id: 32 random bytes each, as base64 or base64url text (`openssl rand -base64 32`), as a
   * `Uint8Array`, or as a WebCrypto AES-GCM `CryptoKey`. To rotate, add the new key, point `encryptWith` at it, and
   * remove the old one once no job sealed with it is left in the queue (its retention, or `blockedStreams()` empty).
   */
  keys: Record<string, string | Uint8Array | CryptoKey>;
  /** The id in `keys` that new jobs are sealed with. Workers open a job with the key its id names. */
  encryptWith: string;
  /**
   * Whether a worker runs a job whose payload is not sealed (enqueued before encryption was turned on). Default
   * false: with encryption on, an unsealed job is refused (`job_undecryptable`), since anyone who can write to the
   * queue's tables could have made it. Turn it on for the switch-over, and off once those jobs are done.
   */
  allowUnencrypted?: boolean;
}

/** Seals and opens job payloads: {@link createPayloadCipher}. */
export interface PayloadCipher {
  /** The event with its payload sealed under the `encryptWith` key. */
  seal(event: QueuedEvent): Promise<QueuedEvent>;
  /** The event's payload, opened; throws a `job_undecryptable` {@link KybWebhookError} when it cannot be. */
  open(event: QueuedEvent, jobId: string): Promise<QueuedPayload>;
}

const ALGORITHM = 'A256GCM';
const KEY_BYTES = 32;
const IV_BYTES = 12;
// Marked pure so that a bundler may drop them from receivers without queue encryption (a Worker's bundle).
const encoder = /* @__PURE__ */ new TextEncoder();
const decoder = /* @__PURE__ */ new TextDecoder();

/**
 * The ids `queueEncryption.keys` may use: short, printable, and safe to show in a log line and in a job.
 *
 * @example
 * ```ts
 * QUEUE_KEY_ID.test('2026-11') // true
 * ```
 */
export const QUEUE_KEY_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * What is wrong with one key of `queueEncryption.keys`, as words that follow its name, or nothing. Never shows the
 * key.
 *
 * @example
 * ```ts
 * queueKeyProblem('c2hvcnQ=') // 'must be 32 bytes (AES-256), got 5: generate one with `openssl rand -base64 32`.'
 * ```
 */
export function queueKeyProblem(key: unknown): string | undefined {
  return keyProblem(key);
}

function keyProblem(key: unknown): string | undefined {
  const fix = 'generate one with `openssl rand -base64 32`';
  if (typeof key === 'string') {
    if (key.trim() === '') return `is empty: the environment variable it is read from is probably unset; ${fix}.`;
    const bytes = bytesOfText(key);
    if (!bytes) return `is not base64 or base64url text: ${fix}.`;
    return bytes.length === KEY_BYTES
      ? undefined
      : `must be ${KEY_BYTES} bytes (AES-256), got ${bytes.length}: ${fix}.`;
  }
  if (key instanceof Uint8Array) {
    return key.length === KEY_BYTES ? undefined : `must be ${KEY_BYTES} bytes (AES-256), got ${key.length}: ${fix}.`;
  }
  if (isCryptoKey(key)) {
    const algorithm = key.algorithm as { name?: string; length?: number };
    if (algorithm.name !== 'AES-GCM' || algorithm.length !== 256) return 'must be an AES-GCM CryptoKey of 256 bits.';
    if (!key.usages.includes('encrypt') || !key.usages.includes('decrypt')) {
      return "must allow the usages 'encrypt' and 'decrypt'.";
    }
    return undefined;
  }
  return `must be base64 text, a Uint8Array or a CryptoKey: ${fix}.`;
}

function isCryptoKey(value: unknown): value is CryptoKey {
  return typeof CryptoKey !== 'undefined' && value instanceof CryptoKey;
}

/** The bytes of base64 or base64url text (padding and surrounding whitespace allowed), or undefined. */
function bytesOfText(text: string): Uint8Array<ArrayBuffer> | undefined {
  const url = text.trim().replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');
  return decodeBase64url(url);
}

/**
 * Makes the sealer and opener of job payloads for a checked `queueEncryption` option (the receiver has checked it
 * with the option kit and {@link queueKeyProblem}, in `queuePayloadEncryption`). Keys are imported into WebCrypto once, on first use.
 *
 * @example
 * ```ts
 * const cipher = createPayloadCipher({ keys: { k1: process.env.KYB_QUEUE_KEY! }, encryptWith: 'k1' })
 * const sealed = await cipher.seal(queuedEvent) // payload: { sealed: { alg: 'A256GCM', kid: 'k1', iv, ciphertext } }
 * const opened = await cipher.open(sealed, job.id)
 * ```
 */
export function createPayloadCipher(options: QueueEncryptionOptions): PayloadCipher {
  // A copy: changing the caller's object later changes nothing here.
  const keys = { ...options.keys };
  const imported = new Map<string, Promise<CryptoKey>>();
  const keyOf = (id: string): Promise<CryptoKey> | undefined => {
    const key = Object.hasOwn(keys, id) ? keys[id] : undefined;
    if (key === undefined) return undefined;
    let promise = imported.get(id);
    if (!promise) {
      promise = importKey(key);
      imported.set(id, promise);
    }
    return promise;
  };
  return {
    async seal(event) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const key = (await keyOf(options.encryptWith)) as CryptoKey;
      const plaintext = encoder.encode(JSON.stringify(event.payload));
      const ciphertext = await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: boundData(event, options.encryptWith) },
        key,
        plaintext,
      );
      const sealed: SealedPayload = {
        sealed: { alg: ALGORITHM, kid: options.encryptWith, iv: base64urlOf(iv), ciphertext: base64urlOf(ciphertext) },
      };
      return { ...event, payload: sealed };
    },
    async open(event, jobId) {
      const { payload } = event;
      if (!isSealedPayload(payload)) {
        if (options.allowUnencrypted) return payload;
        throw undecryptable(
          event,
          jobId,
          'is not encrypted while queueEncryption is on; it was enqueued before encryption was turned on, or written by someone without the key. Set queueEncryption.allowUnencrypted: true for the switch-over if you trust it',
        );
      }
      const { alg, kid, iv, ciphertext } = payload.sealed;
      if (alg !== ALGORITHM) {
        throw undecryptable(event, jobId, `is sealed with ${describeAlgorithm(alg)}, not A256GCM`);
      }
      if (typeof kid !== 'string') throw undecryptable(event, jobId, 'is sealed with no key id');
      const key = keyOf(kid);
      if (!key) {
        throw undecryptable(
          event,
          jobId,
          `was sealed with the key id ${JSON.stringify(kid.slice(0, 64))}, which queueEncryption.keys does not have: add that key back (keep old keys until no job sealed with them is left)`,
        );
      }
      let plaintext: ArrayBuffer;
      try {
        plaintext = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: decodeField(iv), additionalData: boundData(event, kid) },
          await key,
          decodeField(ciphertext),
        );
      } catch {
        throw undecryptable(
          event,
          jobId,
          `did not decrypt with the key id ${JSON.stringify(kid)}: the key under that id is not the one that sealed it, or the job was altered`,
        );
      }
      return payloadOf(plaintext, event, jobId);
    },
  };
}

/** Whether a job's payload is sealed (`{ sealed: { … } }`) rather than a plain {@link QueuedPayload}. */
export function isSealedPayload(payload: QueuedEvent['payload']): payload is SealedPayload {
  return typeof (payload as Partial<SealedPayload>).sealed === 'object' && (payload as SealedPayload).sealed !== null;
}

async function importKey(key: string | Uint8Array | CryptoKey): Promise<CryptoKey> {
  if (isCryptoKey(key)) return key;
  const bytes = typeof key === 'string' ? (bytesOfText(key) as Uint8Array<ArrayBuffer>) : new Uint8Array(key);
  return crypto.subtle.importKey('raw', bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

/** The job's readable ids and the key id, as the additional data both sides bind the ciphertext to. */
function boundData(event: QueuedEvent, kid: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(
    JSON.stringify([
      'kyb-webhooks/queue-payload/1',
      kid,
      event.key,
      event.eventId,
      event.streamId,
      event.seq,
      event.type,
    ]),
  );
}

function base64urlOf(bytes: ArrayBuffer | Uint8Array): string {
  return encodeBase64url(new Uint8Array(bytes));
}

function decodeField(text: unknown): Uint8Array<ArrayBuffer> {
  // A field that is not base64url fails decryption like a wrong key: the job was altered.
  return (typeof text === 'string' ? decodeBase64url(text) : undefined) ?? new Uint8Array(0);
}

function payloadOf(plaintext: ArrayBuffer, event: QueuedEvent, jobId: string): QueuedPayload {
  try {
    return JSON.parse(decoder.decode(plaintext)) as QueuedPayload;
  } catch {
    // Only a sealer that is not this one gets here (GCM authenticated it); JSON.parse's message would quote the text.
    throw undecryptable(event, jobId, 'decrypted to something that is not a job payload');
  }
}

function describeAlgorithm(alg: unknown): string {
  return typeof alg === 'string' ? JSON.stringify(alg.slice(0, 32)) : 'no algorithm';
}

function undecryptable(event: QueuedEvent, jobId: string, problem: string): KybWebhookError {
  return new KybWebhookError('job_undecryptable', `Job ${jobId} (event ${event.eventId}) ${problem}.`, {
    detail: `stream ${event.streamId} seq ${event.seq}`,
  });
}
