export { createReceiver } from './receiver.js';
export type { Receiver, ReceiverOptions, ReceiveInput, ReceiveResult, ResponseBody, VerifiedDelivery } from './receiver-types.js';
export { createSignatureVerifier, parseSignatureHeader } from './signature.js';
export type { SecretKeyring, SecretVersion, ParsedSignatureHeader, SignatureVerifierOptions } from './signature.js';
export { createAttestationVerifier, ATTESTATION_TYP } from './attestation.js';
export type { AttestationOptions, AttestationClaims, EnvelopeIdentity, VerifyAttestationOptions } from './attestation.js';
export { envelopeSchema, ULID_PATTERN } from './envelope.js';
export type { Envelope } from './envelope.js';
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
} from './events.js';
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
} from './events.js';
export { ReleasedAnswers, answersFromClaims, findReleasedAnswerList } from './answers.js';
export { HandlerError } from './dispatch.js';
export type {
  HandlerContext,
  BaseHandlerContext,
  DeliveryAuthentication,
  EventHandler,
  AnyEventHandler,
  UnknownEventHandler,
  UnauthenticatedEventHandler,
  UnauthenticatedContext,
} from './dispatch.js';
export { checkAttestationBinding } from './attestation-binding.js';
export type { AttestedEnvelope } from './attestation-binding.js';
export { createMemoryStore } from './memory-store.js';
export type { MemoryStore, MemoryStoreOptions } from './memory-store.js';
export { createLeaseToken, checkClaimResult, DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, MAX_STORE_DURATION_MS, storeDurationMs } from './dedupe.js';
export type { DedupeStore, ClaimOptions, CompleteOptions, ClaimResult } from './dedupe.js';
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
} from './stream-store.js';
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
} from './stream-store.js';
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
} from './ordering.js';
export { DEFAULT_BACKFILL_TIMEOUT_MS, DEFAULT_BACKFILL_RETRY_AFTER_MS } from './ordering.js';
export { GONE_CODES, MAX_STALE_BACKFILL_EVENTS } from './backfill-guard.js';
export { UnknownKidError } from './jwks.js';
export type { ReplayOptions } from './replay.js';
export { ERRORS, KybWebhookError, KYB_WEBHOOK_ERROR_CODES } from './errors.js';
export {
  validateOptions,
  validateArgument,
  validateReceiverOptions,
  optionRules,
  suggestOption,
  describeValue,
  DEFAULT_HANDLER_TIMEOUT_MS,
  DEFAULT_STORE_TIMEOUT_MS,
} from './config.js';
export type { OptionRule, OptionsSpec, FieldsSpec, ReportProblem } from './config.js';
export type { ErrorCode, KybWebhookErrorCode, AcknowledgementCode } from './errors.js';
export { readHeader } from './headers.js';
export { readBodyStream, readWebBodyStream, discardBodyStream, OVERSIZED_BODY_DRAIN } from './body.js';
export type { ByteStream, BodyReadResult } from './body.js';
export { receiveDelivery } from './body-source.js';
export type { BodySource, DeliveryInput } from './body-source.js';
export { createAdapter, toAdapterResponse, adapterOptionsSpec, validateAdapterArguments } from './adapter.js';
export type { AdapterMap, AdapterOptions, AdapterResponse } from './adapter.js';
export { createFetchHandler, requestBodySource } from './fetch-handler.js';
export type { FetchHandler, FetchHandlerOptions, WaitUntilContext } from './fetch-handler.js';
export type { HeadersInput } from './headers.js';
export { serializeError } from './logger.js';
export { createConsoleLogger, formatLogEntry } from './console-logger.js';
export type { ConsoleLoggerOptions, LogConsole } from './console-logger.js';
export type { Logger, LogEntry, SerializedError } from './logger.js';
export { walletAddressChangeHandler } from './wallet-address.js';
export type { WalletAddressDirectory } from './wallet-address.js';
