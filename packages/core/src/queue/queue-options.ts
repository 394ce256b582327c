/*
 * The rules of createReceiver's queue-mode options (docs/queue-mode.md), spread into its option rules
 * (receiver-options.ts). The encryption rule only checks that the value was made by `queuePayloadEncryption()`, so a
 * receiver without encryption never loads the cipher or its key rules (queue/payload-encryption.ts).
 */
import { optionRules } from '../option-rules.js';
import { rule, type OptionRule } from '../option-validation.js';

/** `queue` and `queueEncryption`. */
export const QUEUE_OPTION_RULES: Record<'queue' | 'queueEncryption', OptionRule> = {
  queue: optionRules.methods(
    ['enqueue', 'work', 'blockedStreams', 'retryStream', 'skipBlocked'],
    'an event queue (EventQueue): use createMemoryQueue() in one process, or the pg-boss or BullMQ queue',
  ),
  queueEncryption: rule((value) =>
    typeof (value as { cipher?: { seal?: unknown } } | null)?.cipher?.seal === 'function'
      ? undefined
      : "must be made by queuePayloadEncryption({ keys, encryptWith }) (import { queuePayloadEncryption } from '@kyb-webhooks/core'), which checks the keys and attaches the cipher; receivers without encryption never load it.",
  ),
};
