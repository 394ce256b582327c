import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import type { QueueEncryptionOptions } from './payload-cipher.js';
import { queuePayloadEncryption } from './payload-encryption.js';

const KEY = btoa(String.fromCharCode(...new Uint8Array(32).map((_, index) => index * 5 + 3)));
const KEYS_EXAMPLE = "`keys: { '2026-11': process.env.KYB_QUEUE_KEY }`";

/** The message of the `config_invalid` error `queuePayloadEncryption(options)` throws. */
function refusal(options: unknown): string {
  let thrown: unknown;
  try {
    queuePayloadEncryption(options as QueueEncryptionOptions);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(KybWebhookError);
  expect((thrown as KybWebhookError).code).toBe('config_invalid');
  const { message } = thrown as KybWebhookError;
  expect(message).not.toContain(KEY.slice(0, 12));
  return message;
}

describe('queuePayloadEncryption: the problems it names', () => {
  it('shows how to call it when given no options object', () => {
    expect(refusal(null)).toBe(
      "queuePayloadEncryption needs an options object, e.g. queuePayloadEncryption({ keys: { '2026-11': process.env.KYB_QUEUE_KEY }, encryptWith: '2026-11' }); got null.",
    );
  });

  it('names a missing keys alone, with an example', () => {
    expect(refusal({ encryptWith: 'k1' })).toBe(
      `queuePayloadEncryption: \`keys\` is missing: set it to the AES-256 keys by key id, e.g. ${KEYS_EXAMPLE}`,
    );
  });

  it('names a missing encryptWith alone', () => {
    expect(refusal({ keys: { k1: KEY } })).toBe(
      'queuePayloadEncryption: `encryptWith` is missing: set it to the key id in keys that new jobs are sealed with',
    );
  });

  it('names an empty encryptWith alone', () => {
    expect(refusal({ keys: { k1: KEY }, encryptWith: '' })).toBe(
      'queuePayloadEncryption: `encryptWith` is empty: a key id of keys.',
    );
  });

  it.each([
    ['a key in place of the keys object', KEY, 'a string'],
    ['a number', 5, 'a number'],
  ])('refuses %s for keys, alone and without showing it', (_, keys, got) => {
    expect(refusal({ keys, encryptWith: 'k1' })).toBe(
      `queuePayloadEncryption: \`keys\` must be an object of keys by key id, e.g. ${KEYS_EXAMPLE}; got ${got}.`,
    );
  });

  it.each([
    ['key', 'keys'],
    ['secret', 'keys'],
    ['secrets', 'keys'],
    ['currentKeyId', 'encryptWith'],
    ['activeKey', 'encryptWith'],
  ])("points another library's `%s` at `%s`", (name, option) => {
    const options =
      option === 'keys' ? { [name]: { k1: KEY }, encryptWith: 'k1' } : { keys: { k1: KEY }, [name]: 'k1' };
    expect(refusal(options)).toContain(`\`${name}\` is not an option: did you mean \`${option}\`?`);
  });
});
