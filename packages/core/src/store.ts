/**
 * `@kyb-webhooks/core/store`: what a store writer needs. The dedupe contract ({@link DedupeStore}) and the per-stream
 * cursor contract ({@link StreamCursorStore}) with their option and result types; the argument checks and limits
 * every store applies alike (so every store answers a bad call with the same `KybWebhookError`); the page tokens of
 * `listStreams`; the memory store, the reference implementation; and the option kit that checks a store factory's
 * options with the messages every other factory gives.
 *
 * Prove a store with the conformance suite, `runStoreConformance` from `@kyb-webhooks/testing/store-suite`.
 *
 * @example
 * ```ts
 * import { checkStreamArguments, createLeaseToken, optionRules, validateOptions, type StreamCursorStore } from '@kyb-webhooks/core/store'
 *
 * export function createMyStore(options: { client: MyClient }): StreamCursorStore {
 *   validateOptions(options, {
 *     owner: 'createMyStore',
 *     example: 'createMyStore({ client })',
 *     options: { client: optionRules.required(optionRules.methods(['get', 'set']), 'pass a connected client') },
 *   })
 *   // claim() hands out createLeaseToken(); completeInOrder() starts with checkStreamArguments(streamId, seq, firstSeq) …
 * }
 * ```
 */

// The dedupe contract
export {
  createLeaseToken,
  checkClaimResult,
  storeDurationMs,
  isStoreDuration,
  MAX_STORE_DURATION_MS,
} from './store/dedupe.js';
export type { DedupeStore, ClaimOptions, CompleteOptions, ExtendOptions, ClaimResult } from './store/dedupe.js';

// The stream cursor contract
export {
  isStreamCursorStore,
  checkStreamArguments,
  checkStreamId,
  unstorableStreamId,
  checkSkipArguments,
  checkListStreamsOptions,
  cursorRetention,
  inOrderCursorRetention,
  MAX_STREAM_ID_LENGTH,
  MAX_SKIP_REASON_CHARS,
  MAX_LIST_STREAMS_LIMIT,
} from './store/stream-store.js';
export { streamPageToken, readStreamPageToken } from './store/stream-page-token.js';
export type {
  StreamCursorStore,
  GetCursorOptions,
  CompleteInOrderOptions,
  CompleteInOrderResult,
  AdvanceCursorOptions,
  SkipSeqOptions,
  SkippedSeq,
  ListStreamsOptions,
  StreamPage,
  StreamActivity,
} from './store/stream-store.js';

// The reference implementation
export { createMemoryStore } from './store/memory-store.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory-store.js';

// The option kit
export { optionRules } from './option-rules.js';
export { validateOptions, validateArgument } from './option-validation.js';
export type { OptionRule, OptionsSpec, FieldsSpec, ReportProblem } from './option-validation.js';
export { describeValue, suggestOption } from './option-words.js';
