/*
 * `queuePayloadEncryption()`, the value of createReceiver's `queueEncryption` option (queue mode's payload encryption,
 * queue/payload-cipher.ts): it checks the keys with the option kit like every other option (a key that is not 32
 * bytes, an unset environment variable, a key pasted where its id goes, an `encryptWith` that names no key, other
 * libraries' names for the fields, all refused at creation with the fix) and attaches the cipher. A function rather
 * than a plain object, like `streamOrdering()`, so that receivers without encryption never load it.
 */
import { optionRules } from '../option-rules.js';
import { rule, validateOptions, type FieldsSpec } from '../option-validation.js';
import { describeValue, isPlainObject, ordinal } from '../option-words.js';
import {
  createPayloadCipher,
  QUEUE_KEY_ID,
  queueKeyProblem,
  type PayloadCipher,
  type QueueEncryptionOptions,
} from './payload-cipher.js';

const QUEUE_KEYS_EXAMPLE = "keys: { '2026-11': process.env.KYB_QUEUE_KEY }";
// Marked pure so that a bundler may drop it from receivers without queue encryption (a Worker's bundle).
const queueKeysRule = /* @__PURE__ */ rule((value, path, report) => {
  if (!isPlainObject(value))
    return `must be an object of keys by key id, e.g. \`${QUEUE_KEYS_EXAMPLE}\`; got ${describeValue(value)}.`;
  const ids = Object.keys(value);
  if (ids.length === 0) return `is empty: add a key, e.g. \`${QUEUE_KEYS_EXAMPLE}\` (openssl rand -base64 32).`;
  ids.forEach((id, index) => {
    // A key id that breaks the rule may be a key pasted in the wrong place: described by position, never shown.
    if (!QUEUE_KEY_ID.test(id)) {
      report(
        path,
        `has a key id (the ${ordinal(index + 1)}, not shown) that is not 1 to 64 letters, digits, '.', '_', ':' or '-'. Put the key in the value: \`${QUEUE_KEYS_EXAMPLE}\`.`,
      );
      return;
    }
    const problem = queueKeyProblem(value[id]);
    if (problem !== undefined) report(`${path}['${id}']`, problem);
  });
  return undefined;
});

// Built when called, so that a bundle of a receiver without encryption (a Worker's) does not carry the rules.
function queueEncryptionFields(): FieldsSpec {
  return {
    options: {
      keys: optionRules.required(queueKeysRule, `set it to the AES-256 keys by key id, e.g. \`${QUEUE_KEYS_EXAMPLE}\``),
      encryptWith: optionRules.required(
        optionRules.nonEmptyString('a key id of keys'),
        'set it to the key id in keys that new jobs are sealed with',
      ),
      allowUnencrypted: optionRules.boolean(),
    },
    aliases: {
      key: 'keys',
      secret: 'keys',
      secrets: 'keys',
      keyId: 'encryptWith',
      kid: 'encryptWith',
      currentKey: 'encryptWith',
      currentKeyId: 'encryptWith',
      activeKey: 'encryptWith',
      activeKeyId: 'encryptWith',
      primaryKey: 'encryptWith',
      allowPlaintext: 'allowUnencrypted',
      allowCleartext: 'allowUnencrypted',
    },
    refine(values, report, at) {
      const { keys, encryptWith } = values;
      if (isPlainObject(keys) && typeof encryptWith === 'string' && !Object.hasOwn(keys, encryptWith)) {
        report(at('encryptWith'), `must be one of the key ids in \`${at('keys')}\`: the key new jobs are sealed with.`);
      }
    },
  };
}

/**
 * The receiver's `queueEncryption` option as {@link queuePayloadEncryption} makes it: the key new jobs are sealed with,
 * and the cipher (which holds the keys; nothing here shows them).
 */
export interface QueuePayloadEncryption {
  readonly encryptWith: string;
  /** @internal Seals and opens job payloads. */
  readonly cipher: PayloadCipher;
}

/**
 * Queue mode's payload encryption, for `createReceiver`'s `queueEncryption` option: each job's payload (the verified
 * envelope and the attestation claims, a release's answers among them) is sealed with AES-256-GCM before it is
 * enqueued, and opened by the workers' receiver with the key the job names. Throws `config_invalid` naming the fix for
 * a key that is not 32 bytes, an unset environment variable, or an `encryptWith` that names no key.
 *
 * @example
 * ```ts
 * import { createReceiver, queuePayloadEncryption } from '@kyb-webhooks/core'
 *
 * const receiver = createReceiver({
 *   secrets,
 *   queue,
 *   queueEncryption: queuePayloadEncryption({
 *     keys: { '2026-11': process.env.KYB_QUEUE_KEY_2026_11, '2026-05': process.env.KYB_QUEUE_KEY_2026_05 },
 *     encryptWith: '2026-11',
 *   }),
 * })
 * ```
 */
export function queuePayloadEncryption(options: QueueEncryptionOptions): QueuePayloadEncryption {
  validateOptions(options, {
    owner: 'queuePayloadEncryption',
    example: "queuePayloadEncryption({ keys: { '2026-11': process.env.KYB_QUEUE_KEY }, encryptWith: '2026-11' })",
    ...queueEncryptionFields(),
  });
  return Object.freeze({ encryptWith: options.encryptWith, cipher: createPayloadCipher(options) });
}
