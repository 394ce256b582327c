/**
 * The KYB service API, typed (issue 12 §1): release pull verified like a webhook, deliveries, events after a seq,
 * redeliver, reactivate. Native fetch only; runs on Node, Bun, Deno and Workers.
 */
export {
  createKybClient,
  DEFAULT_DATA_REQUEST_PATH,
  DEFAULT_REQUEST_PREFIX,
  DEFAULT_SIGNATURE_REQUEST_PATH,
} from './client.js';
export type { EventsOptions, KybClient, KybClientOptions, ReleaseResult } from './client.js';
export { InsufficientCreditError, KybApiError, isKybApiError } from './errors.js';
export type { KybApiErrorCode } from './errors.js';
export type { CallOptions, RetryPolicy } from './http.js';
export type { DeliveryLogEntry, StreamEvent } from './parse.js';
export { recover, DEFAULT_PROGRESS_EVERY } from './recover.js';
export { EVENT_NOT_SERVED } from './recover-stream.js';
export type {
  RecoverTarget,
  RecoverOptions,
  RecoverReport,
  RecoverCounts,
  RecoverFailure,
  RecoverProgress,
  RecoverReceiver,
  StreamRecovery,
} from './recover.js';
