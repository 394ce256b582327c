/** The refusal reasons of spec §3, in a module of their own: the schemas (events.ts) and the root entry both need them. */

/**
 * The refusal reasons of a data request named in spec §3.
 *
 * @example
 * ```ts
 * const known = (DATA_REQUEST_REFUSAL_REASONS as readonly string[]).includes(event.data.reason)
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
/** A known refusal reason, or a newer one as a plain string. */
export type DataRequestRefusalReason = (typeof DATA_REQUEST_REFUSAL_REASONS)[number] | (string & {});
