/**
 * `@kyb-webhooks/core/queue`: what a queue engine writer needs (queue mode, docs/queue-mode.md). The contract a
 * receiver enqueues into and its workers take jobs from ({@link EventQueue}), the job and its payload, the error that
 * makes the receiver answer 429, the memory queue as the reference implementation, and the option kit that checks an
 * engine factory's options with the messages every other factory gives.
 *
 * Prove an engine with the queue conformance suite of `@kyb-webhooks/testing`.
 *
 * @example
 * ```ts
 * import { QueueFullError, type EventQueue, type QueuedEvent } from '@kyb-webhooks/core/queue'
 *
 * export function createMyQueue(client: MyQueueClient): EventQueue {
 *   return {
 *     name: 'my queue',
 *     async enqueue(event: QueuedEvent) {
 *       if ((await client.backlog()) > 10_000) throw new QueueFullError(30)
 *       return (await client.addOnce(event.key, event)) ? 'enqueued' : 'duplicate'
 *     },
 *     // work, blockedStreams, retryStream, skipBlocked …
 *   } as EventQueue
 * }
 * ```
 */

// The contract
export { QueueFullError, describeJobFailure } from './queue/types.js';
export type {
  EventQueue,
  QueuedEvent,
  QueuedPayload,
  SealedPayload,
  QueueJob,
  JobHandler,
  QueueSubscription,
  BlockedStream,
} from './queue/types.js';
export { JobFailedError } from './queue/worker.js';
export { isSealedPayload } from './queue/payload-cipher.js';
export type { QueueEncryptionOptions } from './queue/payload-cipher.js';

// The reference implementation
export { createMemoryQueue } from './queue/memory-queue.js';
export type { MemoryQueue, MemoryQueueOptions } from './queue/memory-queue.js';

// The option kit
export { optionRules } from './option-rules.js';
export { validateOptions, validateArgument } from './option-validation.js';
export type { OptionRule, OptionsSpec, FieldsSpec, ReportProblem } from './option-validation.js';
