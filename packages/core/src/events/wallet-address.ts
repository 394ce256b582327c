import type { EventHandler, HandlerContext } from '../pipeline/dispatch.js';
import { KybWebhookError } from '../errors.js';
import type { KybEvent } from './events.js';

const WALLET_ADDRESS_CHANGED = 'kyb.business.wallet_address_changed';
type WalletAddressChanged = KybEvent<typeof WALLET_ADDRESS_CHANGED>;

/**
 * Where the merchant resolves a business by its wallet address. {@link walletAddressChangeHandler} calls it.
 *
 * @example
 * ```ts
 * const directory: WalletAddressDirectory = {
 *   // One statement: the row's address is moved, so no second row for the previous address ever exists.
 *   replace: (previous, current) =>
 *     current === undefined
 *       ? db.query('DELETE FROM business_wallets WHERE lower(address) = lower($1)', [previous])
 *       : db.query('UPDATE business_wallets SET address = $2 WHERE lower(address) = lower($1)', [previous, current]),
 * }
 * ```
 */
export interface WalletAddressDirectory {
  /**
   * In one step, make `previousAddress` stop resolving, at once and for good, and (when the event names it) make the
   * same business resolve by `currentAddress`. Move the entry (update its address in place) or delete it: never a
   * soft delete a lookup could still follow, never an alias or a forwarding entry, no grace period (spec 6 rule 1).
   * Compare addresses case-insensitively (hex addresses also travel in checksum case). Must be idempotent: a retried
   * event calls it again, and then finds nothing under the previous address.
   */
  replace(
    previousAddress: string,
    currentAddress: string | undefined,
    event: WalletAddressChanged,
    context: HandlerContext<typeof WALLET_ADDRESS_CHANGED>,
  ): unknown;
}

/**
 * The handler for `kyb.business.wallet_address_changed` that applies spec 6 rule 1: the previous address stops
 * resolving at once and is never kept as an alias. It awaits `replace(previous, current)` before the delivery is
 * acknowledged; any failure fails the delivery (the service retries it), so the previous address is never left
 * resolving behind a 2xx. `current` is `undefined` when the event names no new address, or names the previous one
 * again in another letter case (that would keep the previous address resolving).
 *
 * The event is attested: the receiver has verified it before the handler runs, so an unauthenticated sender cannot
 * make an address stop resolving (attestation-only receivers never pass unattested events to `on` handlers at all).
 * On a receiver without `secrets`, only the attestation's claims are authenticated, not `event.data`: the helper then
 * takes both addresses from the claims, and fails the delivery (the service retries it) when the claims do not sign
 * `previous_wallet_address`, or the body names a new address they do not sign, so that someone who holds a genuine
 * token cannot move an entry to an address of their own. The spec does not list the addresses among the claims: if
 * the service does not sign them, every change fails on such a receiver until it has the endpoint secret (or the
 * event is fetched from the API by an ordering backfill), so configure `secrets` when you use this helper.
 *
 * @example
 * ```ts
 * receiver.on('kyb.business.wallet_address_changed', walletAddressChangeHandler({
 *   replace(previous, current) {
 *     const business = wallets.get(previous.toLowerCase())
 *     wallets.delete(previous.toLowerCase())
 *     if (business !== undefined && current !== undefined) wallets.set(current.toLowerCase(), business)
 *   },
 * }))
 * ```
 */
export function walletAddressChangeHandler(
  directory: WalletAddressDirectory,
): EventHandler<typeof WALLET_ADDRESS_CHANGED> {
  if (typeof directory?.replace !== 'function') {
    throw new KybWebhookError(
      'config_invalid',
      'walletAddressChangeHandler needs { replace(previousAddress, currentAddress) } that moves or deletes the entry of the previous address.',
    );
  }
  return async (event, context) => {
    const { previous, named } = authenticatedAddresses(event, context);
    // A "change" to the same address (in any letter case) or to nothing named: the previous address must still stop
    // resolving, and nothing may take its place.
    const current =
      named === undefined || named === '' || named.toLowerCase() === previous.toLowerCase() ? undefined : named;
    await directory.replace(previous, current, event, context);
  };
}

/**
 * The addresses the handler may act on. With an HMAC (or for an event fetched from the API with the API key) the
 * whole body is authenticated. Without one only the attestation's claims are: a token of this business's stream,
 * re-wrapped under this type with other data, passes every check, since the spec lists no address among the claims.
 */
function authenticatedAddresses(
  event: WalletAddressChanged,
  context: HandlerContext<typeof WALLET_ADDRESS_CHANGED>,
): { previous: string; named: string | undefined } {
  const { authentication, claims } = context;
  if (authentication.hmac !== null || authentication.fetched === true) {
    return { previous: event.data.previous_wallet_address, named: event.data.wallet_address };
  }
  const previous = claims?.['previous_wallet_address'];
  const named = claims?.['wallet_address'];
  // A new address only in the body is as unsigned as a forged one: moving to it, or dropping it, would both be wrong.
  const unsignedNewAddress =
    named === undefined && typeof event.data.wallet_address === 'string' && event.data.wallet_address !== '';
  if (typeof previous !== 'string' || (named !== undefined && typeof named !== 'string') || unsignedNewAddress) {
    const unsigned = typeof previous !== 'string' ? 'previous_wallet_address' : 'wallet_address';
    throw new Error(
      `walletAddressChangeHandler: the receiver has no HMAC secrets and the attestation does not sign ${unsigned}, ` +
        'so the addresses in this event are not authenticated and no entry was changed. Pass the endpoint secret as ' +
        "`secrets` (e.g. { '1': process.env.KYB_SECRET_V1 }); the service retries the delivery.",
    );
  }
  return { previous, named: named as string | undefined };
}
