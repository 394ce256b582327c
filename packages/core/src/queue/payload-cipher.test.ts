import { afterEach, describe, expect, it, vi } from 'vitest';
import { KybWebhookError } from '../errors.js';
import {
  createPayloadCipher,
  isSealedPayload,
  queueKeyProblem,
  type QueueEncryptionOptions,
} from './payload-cipher.js';
import type { QueuedEvent, SealedPayload } from './types.js';

const KEY_A = new Uint8Array(32).map((_, index) => index + 1);
const KEY_B = new Uint8Array(32).map((_, index) => 200 - index);
const base64Of = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const base64urlOf = (bytes: Uint8Array) => base64Of(bytes).replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');

const ANSWER = 'Ada Lovelace, 12 Analytical Row';
function queuedEvent(overrides: Partial<QueuedEvent> = {}): QueuedEvent {
  return {
    key: '01JQ0000000000000000000001',
    eventId: '01JQ0000000000000000000001',
    streamId: 'str_1',
    seq: 4,
    type: 'kyb.data_request.released',
    payload: {
      envelope: { event_id: '01JQ0000000000000000000001', data: { request_id: 'req_1' } },
      authentication: { hmac: { version: '1' }, attestation: true },
      claims: { answers: [{ subject: 'director', name: 'full_name', value: ANSWER }] } as never,
      typed: true,
      receivedAt: 1,
    },
    ...overrides,
  };
}

function cipherOf(options: Partial<QueueEncryptionOptions> = {}) {
  return createPayloadCipher({ keys: { a: KEY_A }, encryptWith: 'a', ...options });
}

async function refusal(promise: Promise<unknown>): Promise<KybWebhookError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(KybWebhookError);
  expect((error as KybWebhookError).code).toBe('job_undecryptable');
  return error as KybWebhookError;
}

describe('queue payload encryption', () => {
  it('seals the payload so the stored job holds none of it, keeps the ids readable, and opens it back', async () => {
    const cipher = cipherOf();
    const event = queuedEvent();
    const sealed = await cipher.seal(event);
    const stored = JSON.stringify(sealed);
    expect(stored).not.toContain('Lovelace');
    expect(stored).not.toContain('req_1');
    expect(sealed).toMatchObject({
      key: event.key,
      eventId: event.eventId,
      streamId: 'str_1',
      seq: 4,
      type: event.type,
    });
    expect(sealed.payload).toEqual({
      sealed: { alg: 'A256GCM', kid: 'a', iv: expect.stringMatching(/^[\w-]{16}$/), ciphertext: expect.any(String) },
    });
    expect(isSealedPayload(sealed.payload)).toBe(true);
    expect(isSealedPayload(event.payload)).toBe(false);
    expect(await cipher.open(JSON.parse(stored) as QueuedEvent, 'job-1')).toEqual(event.payload);
  });

  it('uses a fresh nonce for every seal', async () => {
    const cipher = cipherOf();
    const first = (await cipher.seal(queuedEvent())).payload as SealedPayload;
    const second = (await cipher.seal(queuedEvent())).payload as SealedPayload;
    expect(first.sealed.iv).not.toBe(second.sealed.iv);
    expect(first.sealed.ciphertext).not.toBe(second.sealed.ciphertext);
  });

  it('rotates by key id: jobs sealed with the old key open while new ones are sealed with the new key', async () => {
    const before = cipherOf({ keys: { '2026-05': KEY_A }, encryptWith: '2026-05' });
    const after = cipherOf({ keys: { '2026-05': KEY_A, '2026-11': KEY_B }, encryptWith: '2026-11' });
    const old = await before.seal(queuedEvent());
    const fresh = await after.seal(queuedEvent());
    expect((fresh.payload as SealedPayload).sealed.kid).toBe('2026-11');
    expect(await after.open(old, 'j1')).toEqual(queuedEvent().payload);
    expect(await after.open(fresh, 'j2')).toEqual(queuedEvent().payload);
    // A worker not given the new key yet cannot open what the rotated receiver sealed, and says which key it needs.
    const error = await refusal(before.open(fresh, 'j2'));
    expect(error.message).toContain('"2026-11"');
    expect(error.message).toContain('queueEncryption.keys does not have');
  });

  it.each([
    ['base64 with padding', base64Of(KEY_A)],
    ['base64url', base64urlOf(KEY_A)],
    ['a Uint8Array', KEY_A],
  ])('takes the key as %s, the same bytes in every form', async (_, key) => {
    const sealed = await cipherOf({ keys: { a: key } }).seal(queuedEvent());
    expect(await cipherOf().open(sealed, 'j')).toEqual(queuedEvent().payload);
  });

  it('takes a WebCrypto AES-GCM CryptoKey', async () => {
    const key = await crypto.subtle.importKey('raw', KEY_A, 'AES-GCM', false, ['encrypt', 'decrypt']);
    const sealed = await cipherOf({ keys: { a: key } }).seal(queuedEvent());
    expect(await cipherOf().open(sealed, 'j')).toEqual(queuedEvent().payload);
  });

  it('refuses a job sealed with another key under the same id, without showing either key', async () => {
    const sealed = await cipherOf({ keys: { a: KEY_B } }).seal(queuedEvent());
    const error = await refusal(cipherOf().open(sealed, 'job-7'));
    expect(error.message).toBe(
      'Job job-7 (event 01JQ0000000000000000000001) did not decrypt with the key id "a": the key under that id is not the one that sealed it, or the job was altered.',
    );
    expect(error.detail).toBe('stream str_1 seq 4');
    for (const key of [KEY_A, KEY_B]) expect(error.message).not.toContain(base64urlOf(key).slice(0, 12));
  });

  it.each([
    ['its seq', { seq: 5 }],
    ['its stream', { streamId: 'str_2' }],
    ['its event id', { eventId: '01JQ0000000000000000000002' }],
    ['its key', { key: 'other' }],
    ['its type', { type: 'kyb.data_request.rejected' }],
  ])('refuses a sealed payload whose job had %s changed (the ids are bound to the ciphertext)', async (_, change) => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    await refusal(cipher.open({ ...sealed, ...change }, 'j'));
  });

  it('refuses a sealed payload moved to another job of the same stream', async () => {
    const cipher = cipherOf();
    const first = await cipher.seal(queuedEvent());
    const second = await cipher.seal(queuedEvent({ key: 'k2', eventId: 'k2', seq: 5 }));
    await refusal(cipher.open({ ...second, payload: first.payload }, 'j'));
  });

  it.each([
    ['a flipped ciphertext byte', (s: SealedPayload['sealed']) => ({ ...s, ciphertext: flipFirst(s.ciphertext) })],
    ['a changed nonce', (s: SealedPayload['sealed']) => ({ ...s, iv: flipFirst(s.iv) })],
    ['a nonce that is not base64url', (s: SealedPayload['sealed']) => ({ ...s, iv: '***' })],
    ['no ciphertext', (s: SealedPayload['sealed']) => ({ ...s, ciphertext: undefined })],
  ])('refuses %s', async (_, alter) => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    const altered = { ...sealed, payload: { sealed: alter((sealed.payload as SealedPayload).sealed) } } as QueuedEvent;
    await refusal(cipher.open(altered, 'j'));
  });

  it('refuses another algorithm, naming it', async () => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    const payload = { sealed: { ...(sealed.payload as SealedPayload).sealed, alg: 'A128CBC-HS256' } };
    const error = await refusal(cipher.open({ ...sealed, payload } as QueuedEvent, 'j'));
    expect(error.message).toContain('is sealed with "A128CBC-HS256", not A256GCM');
  });

  it('refuses an unsealed job while encryption is on, and runs it with allowUnencrypted (the switch-over)', async () => {
    const error = await refusal(cipherOf().open(queuedEvent(), 'job-3'));
    expect(error.message).toContain('is not encrypted while queueEncryption is on');
    expect(error.message).toContain('allowUnencrypted: true');
    expect(await cipherOf({ allowUnencrypted: true }).open(queuedEvent(), 'j')).toEqual(queuedEvent().payload);
  });

  it('does not look a key id up on the prototype', async () => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    const payload = { sealed: { ...(sealed.payload as SealedPayload).sealed, kid: 'toString' } };
    const error = await refusal(cipher.open({ ...sealed, payload } as QueuedEvent, 'j'));
    expect(error.message).toContain('"toString", which queueEncryption.keys does not have');
  });
});

/** Seals `plaintext` for `event` as the version 1 format says, the way another version of the library would. */
async function sealedByFormat(event: QueuedEvent, plaintext: string, kid = 'a', key = KEY_A): Promise<QueuedEvent> {
  const cryptoKey = await crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const bound = ['kyb-webhooks/queue-payload/1', kid, event.key, event.eventId, event.streamId, event.seq, event.type];
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(JSON.stringify(bound)) },
    cryptoKey,
    new TextEncoder().encode(plaintext),
  );
  return {
    ...event,
    payload: {
      sealed: { alg: 'A256GCM', kid, iv: base64urlOf(iv), ciphertext: base64urlOf(new Uint8Array(ciphertext)) },
    },
  };
}

describe('queue payload encryption: the stored format and odd jobs', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('opens a payload sealed in the version 1 format by another sealer (jobs outlive an upgrade)', async () => {
    const event = queuedEvent();
    const sealed = await sealedByFormat(event, JSON.stringify(event.payload));
    expect(await cipherOf().open(sealed, 'j')).toEqual(event.payload);
  });

  it('refuses a payload that decrypts to something that is not JSON, without quoting it', async () => {
    const sealed = await sealedByFormat(queuedEvent(), `not json: ${ANSWER}`);
    const error = await refusal(cipherOf().open(sealed, 'job-9'));
    expect(error.message).toBe(
      'Job job-9 (event 01JQ0000000000000000000001) decrypted to something that is not a job payload.',
    );
  });

  it.each([
    ['no algorithm', { alg: undefined }, 'is sealed with no algorithm, not A256GCM'],
    ['no key id', { kid: undefined }, 'Job j (event 01JQ0000000000000000000001) is sealed with no key id.'],
    ['a key id that is not text', { kid: 7 }, 'Job j (event 01JQ0000000000000000000001) is sealed with no key id.'],
    [
      'a long algorithm, cut to 32 characters',
      { alg: 'X'.repeat(40) },
      `is sealed with "${'X'.repeat(32)}", not A256GCM`,
    ],
  ])('refuses a sealed payload with %s', async (_, change, expected) => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    const payload = { sealed: { ...(sealed.payload as SealedPayload).sealed, ...change } };
    const error = await refusal(cipher.open({ ...sealed, payload } as QueuedEvent, 'j'));
    expect(error.message).toContain(expected);
  });

  it('names an unknown key id cut to 64 characters', async () => {
    const cipher = cipherOf();
    const sealed = await cipher.seal(queuedEvent());
    const payload = { sealed: { ...(sealed.payload as SealedPayload).sealed, kid: 'k'.repeat(100) } };
    const error = await refusal(cipher.open({ ...sealed, payload } as QueuedEvent, 'j'));
    expect(error.message).toContain(`the key id "${'k'.repeat(64)}", which queueEncryption.keys does not have`);
  });

  it('takes `sealed: null` for an unsealed payload', async () => {
    const payload = { ...queuedEvent().payload, sealed: null } as unknown as QueuedEvent['payload'];
    expect(isSealedPayload(payload)).toBe(false);
    const error = await refusal(cipherOf().open(queuedEvent({ payload }), 'j'));
    expect(error.message).toContain('is not encrypted while queueEncryption is on');
    expect(await cipherOf({ allowUnencrypted: true }).open(queuedEvent({ payload }), 'j')).toEqual(payload);
  });

  it('imports each key into WebCrypto once, on first use', async () => {
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    const cipher = cipherOf({ keys: { a: KEY_A, b: KEY_B } });
    expect(importKey).not.toHaveBeenCalled();
    const sealed = [await cipher.seal(queuedEvent()), await cipher.seal(queuedEvent())];
    for (const event of sealed) await cipher.open(event, 'j');
    expect(importKey).toHaveBeenCalledTimes(1);
  });

  it('checks text and byte keys where the runtime has no CryptoKey global', () => {
    vi.stubGlobal('CryptoKey', undefined);
    try {
      expect(queueKeyProblem(KEY_A)).toBeUndefined();
      expect(queueKeyProblem(42)).toBe(
        'must be base64 text, a Uint8Array or a CryptoKey: generate one with `openssl rand -base64 32`.',
      );
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('queueKeyProblem', () => {
  it.each([
    [base64Of(KEY_A), undefined],
    [` ${base64Of(KEY_A)}\n`, undefined],
    [KEY_A, undefined],
    [
      '',
      'is empty: the environment variable it is read from is probably unset; generate one with `openssl rand -base64 32`.',
    ],
    [base64Of(KEY_A.slice(0, 16)), 'must be 32 bytes (AES-256), got 16: generate one with `openssl rand -base64 32`.'],
    [KEY_A.slice(0, 31), 'must be 32 bytes (AES-256), got 31: generate one with `openssl rand -base64 32`.'],
    [
      ' \n\t',
      'is empty: the environment variable it is read from is probably unset; generate one with `openssl rand -base64 32`.',
    ],
    [
      `KYB_QUEUE_KEY=${base64urlOf(KEY_A)}`,
      'is not base64 or base64url text: generate one with `openssl rand -base64 32`.',
    ],
    ['not base64 at all!', 'is not base64 or base64url text: generate one with `openssl rand -base64 32`.'],
    [42, 'must be base64 text, a Uint8Array or a CryptoKey: generate one with `openssl rand -base64 32`.'],
  ])('%j → %j', (key, problem) => {
    expect(queueKeyProblem(key)).toBe(problem);
  });

  it('checks a CryptoKey for AES-GCM, 256 bits and both usages', async () => {
    const raw = (bytes: Uint8Array<ArrayBuffer>, algorithm: string, usages: KeyUsage[]) =>
      crypto.subtle.importKey('raw', bytes, algorithm, false, usages);
    expect(queueKeyProblem(await raw(KEY_A, 'AES-GCM', ['encrypt', 'decrypt']))).toBeUndefined();
    expect(queueKeyProblem(await raw(KEY_A.slice(0, 16), 'AES-GCM', ['encrypt', 'decrypt']))).toBe(
      'must be an AES-GCM CryptoKey of 256 bits.',
    );
    expect(queueKeyProblem(await raw(KEY_A, 'AES-CBC', ['encrypt', 'decrypt']))).toBe(
      'must be an AES-GCM CryptoKey of 256 bits.',
    );
    expect(queueKeyProblem(await raw(KEY_A, 'AES-GCM', ['encrypt']))).toBe(
      "must allow the usages 'encrypt' and 'decrypt'.",
    );
  });
});

function flipFirst(text: string): string {
  return (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
}
