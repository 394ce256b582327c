export { createReceiver } from './receiver.js';
export type { Receiver, ReceiverOptions, ReceiveInput, ReceiveResult, ResponseBody, VerifiedDelivery } from './receiver-types.js';
export { createSignatureVerifier, parseSignatureHeader } from './verify/signature.js';
export type { SecretKeyring, SecretVersion, ParsedSignatureHeader, SignatureVerifierOptions } from './verify/signature.js';
export { createAttestationVerifier, ATTESTATION_TYP } from './verify/attestation.js';
export type { AttestationOptions, AttestationClaims, EnvelopeIdentity, VerifyAttestationOptions } from './verify/attestation.js';
export { envelopeSchema, ULID_PATTERN } from './events/envelope.js';
export type { Envelope } from './events/envelope.js';
export {
  eventDataSchemas,
  KNOWN_EVENT_TYPES,
  ATTESTED_EVENT_TYPES,
  DATA_REQUEST_REFUSAL_REASONS,
  isKnownEventType,
  isKnownEvent,
  timestampSchema,
  priceSchema,
  priceLineSchema,
  chargeSchema,
  releasedAnswerSchema,
  approvalSchema,
} from './events/events.js';
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
export { ReleasedAnswers, answersFromClaims, findReleasedAnswerList } from './events/released-answers.js';
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
export { checkAttestationBinding } from './verify/attestation-binding.js';
export type { AttestedEnvelope } from './verify/attestation-binding.js';
export { createMemoryStore } from './store/memory-store.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory-store.js';
export { createLeaseToken, checkClaimResult, DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, MAX_STORE_DURATION_MS, storeDurationMs } from './store/dedupe.js';
export type { DedupeStore, ClaimOptions, CompleteOptions, ClaimResult } from './store/dedupe.js';
export {
  isStreamCursorStore,
  checkStreamArguments,
  checkStreamId,
  cursorRetention,
  inOrderCursorRetention,
  DEFAULT_CURSOR_RETAIN_MS,
  MAX_STREAM_ID_LENGTH,
  MAX_LIST_STREAMS_LIMIT,
  checkListStreamsOptions,
  streamPageToken,
  readStreamPageToken,
  checkSkipArguments,
  MAX_SKIP_REASON_CHARS,
} from './store/stream-store.js';
export type {
  StreamCursorStore,
  GetCursorOptions,
  CompleteInOrderOptions,
  CompleteInOrderResult,
  AdvanceCursorOptions,
  ListStreamsOptions,
  StreamPage,
  StreamActivity,
  SkipSeqOptions,
  SkippedSeq,
} from './store/stream-store.js';
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
} from './ordering/ordering.js';
export { DEFAULT_BACKFILL_TIMEOUT_MS, DEFAULT_BACKFILL_RETRY_AFTER_MS } from './ordering/ordering.js';
export { GONE_CODES, MAX_STALE_BACKFILL_EVENTS } from './ordering/backfill-guard.js';
export { UnknownKidError } from './verify/jwks.js';
export type { ReplayOptions } from './pipeline/replay.js';
export { ERRORS, KybWebhookError, KYB_WEBHOOK_ERROR_CODES } from './errors.js';
export { validateOptions, validateArgument, optionRules } from './option-rules.js';
export { suggestOption, describeValue } from './option-words.js';
export { validateReceiverOptions, DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_STORE_TIMEOUT_MS } from './receiver-options.js';
export type { OptionRule, OptionsSpec, FieldsSpec, ReportProblem } from './option-rules.js';
export type { ErrorCode, KybWebhookErrorCode, AcknowledgementCode } from './errors.js';
export { readHeader } from './http/headers.js';
export { readBodyStream, readWebBodyStream, discardBodyStream, OVERSIZED_BODY_DRAIN } from './http/body.js';
export type { ByteStream, BodyReadResult } from './http/body.js';
export { receiveDelivery } from './http/body-source.js';
export type { BodySource, DeliveryInput } from './http/body-source.js';
export { createAdapter, toAdapterResponse, adapterOptionsSpec, validateAdapterArguments } from './http/adapter-core.js';
export type { AdapterMap, AdapterOptions, AdapterResponse } from './http/adapter-core.js';
export { createFetchHandler, requestBodySource } from './http/fetch-handler.js';
export type { FetchHandler, FetchHandlerOptions, WaitUntilContext } from './http/fetch-handler.js';
export type { HeadersInput } from './http/headers.js';
export { serializeError } from './log/logger.js';
export { createConsoleLogger, formatLogEntry } from './log/console-logger.js';
export type { ConsoleLoggerOptions, LogConsole } from './log/console-logger.js';
export type { Logger, LogEntry, SerializedError } from './log/logger.js';
export { walletAddressChangeHandler } from './events/wallet-address.js';
export type { WalletAddressDirectory } from './events/wallet-address.js';
