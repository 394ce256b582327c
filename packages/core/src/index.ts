/**
 * `@kyb-webhooks/core`: what an application imports. A receiver and its options, the events and their types, the
 * handler types, the errors, the built-in memory store and the store interfaces an application passes or reads, the
 * ordering options, the loggers and the fetch-style entry point.
 *
 * The zod schemas of the events are in `@kyb-webhooks/core/schemas`: this entry never loads zod (see schemas.ts).
 * Writing a store? `@kyb-webhooks/core/store` has the store contracts and their argument checks. Writing an adapter
 * for a framework? `@kyb-webhooks/core/adapter` has `createAdapter`, the body sources and readers. Both also carry
 * the option kit (`optionRules`, `validateOptions`, `describeValue`) that checks a factory's options.
 *
 * @example
 * ```ts
 * import { createReceiver } from '@kyb-webhooks/core'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! } })
 * receiver.on('kyb.data_request.refused', async (event) => console.log(event.data.reason))
 * ```
 */

// The receiver
export { createReceiver } from './receiver.js';
export type {
  Receiver,
  ReceiverOptions,
  ReceiveInput,
  ReceiveResult,
  ResponseBody,
  VerifiedDelivery,
} from './receiver-types.js';
export { validateReceiverOptions, DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_STORE_TIMEOUT_MS } from './receiver-options.js';
export { createFetchHandler } from './http/fetch-handler.js';
export type { FetchHandler, FetchHandlerOptions, WaitUntilContext } from './http/fetch-handler.js';
// Reading a body with the receiver's limit, and the headers, on a plain node:http server (the core README's quickstart).
export { readBodyStream } from './http/body.js';
export { nodeHeaders } from './http/headers.js';
export type { ByteStream, BodyReadResult } from './http/body.js';

// Verifying by hand
export { createSignatureVerifier, parseSignatureHeader } from './verify/signature.js';
export type {
  SecretKeyring,
  SecretVersion,
  ParsedSignatureHeader,
  SignatureVerifierOptions,
} from './verify/signature.js';
export { createAttestationVerifier, ATTESTATION_TYP } from './verify/attestation.js';
export type { AttestationVerifier } from './verify/attestation.js';
export type {
  AttestationOptions,
  AttestationClaims,
  EnvelopeIdentity,
  VerifyAttestationOptions,
} from './verify/attestation.js';
export { checkAttestationBinding } from './verify/attestation-binding.js';
export type { AttestedEnvelope } from './verify/attestation-binding.js';
export { UnknownKidError } from './verify/jwks.js';

// Events
// The zod schemas are in '@kyb-webhooks/core/schemas' (schemas.ts): importing them loads zod, which this entry avoids.
export { ULID_PATTERN } from './events/patterns.js';
export type { Envelope } from './events/envelope.js';
export { KNOWN_EVENT_TYPES, ATTESTED_EVENT_TYPES, isKnownEventType, isKnownEvent } from './events/event-types.js';
export { DATA_REQUEST_REFUSAL_REASONS } from './events/refusal-reasons.js';
export type {
  KnownEventType,
  KybEvent,
  UnknownKybEvent,
  EventData,
  Timestamp,
  Price,
  PriceLine,
  Charge,
  ReleasedAnswer,
  Approval,
  DataRequestRefusalReason,
} from './events/events.js';
export { ReleasedAnswers } from './events/released-answers.js';
export { walletAddressChangeHandler } from './events/wallet-address.js';
export type { WalletAddressDirectory } from './events/wallet-address.js';

// Handlers
export { HandlerError } from './pipeline/dispatch.js';
export type {
  HandlerContext,
  BaseHandlerContext,
  DeliveryAuthentication,
  EventHandler,
  AnyEventHandler,
  UnknownEventHandler,
  UnauthenticatedEventHandler,
  UnauthenticatedContext,
} from './pipeline/dispatch.js';
export type { ReplayOptions } from './pipeline/replay.js';

// Stores: the built-in one, and the interfaces an application passes (store) or reads (listStreams, listSkips)
export { createMemoryStore } from './store/memory-store.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory-store.js';
export { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS } from './store/dedupe.js';
export type { DedupeStore } from './store/dedupe.js';
export { isStreamCursorStore, DEFAULT_CURSOR_RETAIN_MS } from './store/stream-store.js';
export type {
  StreamCursorStore,
  ListStreamsOptions,
  StreamPage,
  StreamActivity,
  SkippedSeq,
} from './store/stream-store.js';

// Ordering
export type {
  OrderingOptions,
  OrderingMode,
  FetchEventsAfter,
  GapReport,
  GapHandler,
  UnfillableReport,
  UnfillableReason,
  UnfillableDecision,
  UnfillableHandler,
  StreamOrdering,
} from './ordering/types.js';
export { streamOrdering } from './ordering/stream-ordering.js';
export { DEFAULT_BACKFILL_TIMEOUT_MS, DEFAULT_BACKFILL_RETRY_AFTER_MS } from './ordering/types.js';
export { GONE_CODES, MAX_STALE_BACKFILL_EVENTS } from './ordering/backfill-guard.js';

// receiver.verify's refusals as HTTP answers
export { answerForError } from './pipeline/outcomes.js';

// API versions (docs/receiver.md#api-versions)
export type { ApiVersion, ApiVersionOptions } from './pipeline/api-version.js';

// Tracing channels (docs/observability.md): node:diagnostics_channel, where the runtime has it
export { TRACING_CHANNELS } from './telemetry/channels.js';
export type {
  ReceiveTrace,
  HandlerTrace,
  StoreTrace,
  JobTrace,
  JwksTrace,
  BackfillTrace,
  ClientRequestTrace,
} from './telemetry/channels.js';
export type {
  ReceiverTelemetry,
  StreamBlockedReport,
  StreamGapReport,
  TracedOperation,
  TraceOf,
} from './telemetry/observers.js';

// Queue mode (docs/queue-mode.md); engine writers: the ./queue entry
export { createQueueWorker, DEFAULT_WORKER_CONCURRENCY } from './queue/worker.js';
export type { QueueWorker, QueueWorkerOptions } from './queue/worker.js';
export { createMemoryQueue } from './queue/memory-queue.js';
export type { MemoryQueue, MemoryQueueOptions } from './queue/memory-queue.js';
export type { EventQueue, BlockedStream } from './queue/types.js';
export { queuePayloadEncryption } from './queue/payload-encryption.js';
export type { QueuePayloadEncryption } from './queue/payload-encryption.js';
export type { QueueEncryptionOptions } from './queue/payload-cipher.js';
export type { JobInfo } from './pipeline/dispatch.js';

// Errors and logs
export { ERRORS, KybWebhookError, KYB_WEBHOOK_ERROR_CODES } from './errors.js';
export type { ErrorCode, KybWebhookErrorCode, AcknowledgementCode } from './errors.js';
export { serializeError } from './log/logger.js';
export type { Logger, LogEntry, SerializedError } from './log/logger.js';
export { createConsoleLogger, formatLogEntry } from './log/console-logger.js';
export type { ConsoleLoggerOptions, LogConsole } from './log/console-logger.js';
