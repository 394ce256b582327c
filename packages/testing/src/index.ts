/**
 * Test kit for KYB webhooks: a signer that produces deliveries exactly as the service does (and every kind of
 * bad one), fixtures for every event type, a JWKS server and a sender with the service's retry and order rules.
 */
export { ulid, ulidTime } from './ulid.js';
export {
  TEST_EVENT_TYPES,
  ATTESTED_TEST_EVENT_TYPES,
  DATA_REQUEST_REFUSAL_REASONS,
  type TestEventType,
} from './event-types.js';
export {
  TEST_API_VERSION,
  TEST_SUBJECTS,
  createTestEvent,
  defaultReleasedAnswers,
  refusedForEveryReason,
  testEvents,
  testStream,
  type EnvelopeOverrides,
  type ReleasedAnswerEntry,
  type TestEnvelope,
} from './fixtures.js';
export {
  generateAttestationKey,
  importAttestationKey,
  exportAttestationKey,
  randomSecret,
  type AttestationKey,
  type Jwks,
} from './keys.js';
export { signatureHeader, type SignatureHeaderParts } from './hmac.js';
export { ATTESTATION_TYP, type AttestOptions, type TokenHeader } from './attestation.js';
export {
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_LOGIN_ISSUER,
  createTestSigner,
  type HmacOptions,
  type SignBytesOptions,
  type SignOptions,
  type SignedDelivery,
  type TestSigner,
  type TestSignerOptions,
} from './signer.js';
export { KYB_JWKS_PATH, startJwksServer, type JwksServer } from './jwks-server.js';
export {
  createTestSender,
  type DeliverOnceOptions,
  type DeliveryAttempt,
  type DeliveryRecord,
  type RetryOptions,
  type TestSender,
  type TestSenderOptions,
} from './sender.js';
export {
  KybServiceError,
  startKybService,
  type CreateDataRequestOptions,
  type EndpointInput,
  type KybService,
  type KybServiceOptions,
  type ServiceRequestSnapshot,
} from './service/kyb-service.js';
export { REAL_RETRY_SCHEDULE, type ServiceDeliveryAttempt } from './service/delivery.js';
export {
  REACTIVATE_PATH,
  RELEASE_PATH_PREFIX,
  SIGNATURE_REQUEST_PATH_PREFIX,
  type ApiCall,
  type ApiFault,
} from './service/http-api.js';
export { API_SHAPE_VARIANTS, type ApiShape } from './service/api-shape.js';
