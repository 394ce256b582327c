/*
 * The event vocabulary of spec §3 and §6, as this kit needs it. It mirrors the core's lists on purpose (the kit
 * must not reach into the core's internals); fixtures.test.ts fails if the two ever drift apart.
 */

/**
 * Every event type of spec §6, in the order the spec lists them.
 *
 * @example
 * ```ts
 * for (const type of TEST_EVENT_TYPES) await sender.send(createTestEvent(type))
 * ```
 */
export const TEST_EVENT_TYPES = [
  'kyb.data_request.pending_approval',
  'kyb.data_request.released',
  'kyb.data_request.refused',
  'kyb.signature_request.pending_approval',
  'kyb.signature_request.signed',
  'kyb.signature_request.refused',
  'kyb.business.wallet_address_changed',
] as const;

/**
 * An event type of spec §6.
 *
 * @example
 * ```ts
 * const type: TestEventType = 'kyb.data_request.released'
 * ```
 */
export type TestEventType = (typeof TEST_EVENT_TYPES)[number];

/**
 * The event types the spec marks attested: the signer adds an attestation JWT to these by default.
 *
 * @example
 * ```ts
 * ATTESTED_TEST_EVENT_TYPES.has('kyb.data_request.released') // true
 * ```
 */
export const ATTESTED_TEST_EVENT_TYPES: ReadonlySet<string> = new Set<TestEventType>([
  'kyb.data_request.released',
  'kyb.business.wallet_address_changed',
]);

/**
 * The refusal reasons of a data request named in spec §3.
 *
 * @example
 * ```ts
 * const events = DATA_REQUEST_REFUSAL_REASONS.map((reason) => testEvents.dataRequestRefused({ data: { reason } }))
 * ```
 */
export const DATA_REQUEST_REFUSAL_REASONS = [
  'declined',
  'threshold_not_met',
  'expired',
  'business_not_verified',
  'business_wallet_rotated',
  'cancelled_by_merchant',
  'unavailable',
] as const;
