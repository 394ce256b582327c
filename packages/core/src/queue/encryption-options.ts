/*
 * The rules of createReceiver's `queueEncryption` option (queue/payload-cipher.ts), written with the option kit like
 * every other option: a key that is not 32 bytes, an unset environment variable, a key pasted where its id goes, an
 * `encryptWith` that names no key, and other libraries' names for the fields, all refused at creation with the fix.
 */
import { optionRules, rule, type FieldsSpec } from '../option-rules.js';
import { describeValue, isPlainObject, ordinal } from '../option-words.js';
import { QUEUE_KEY_ID, queueKeyProblem } from './payload-cipher.js';

const QUEUE_KEYS_EXAMPLE = "keys: { '2026-11': process.env.KYB_QUEUE_KEY }";
const queueKeysRule = rule((value, path, report) => {
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

/** The fields of `queueEncryption`, for the receiver's option rules. */
export const queueEncryptionFields: FieldsSpec = {
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
