import type { EventHandler, HandlerContext } from './dispatch.js';
import { KybWebhookError } from './errors.js';
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
export function walletAddressChangeHandler(directory: WalletAddressDirectory): EventHandler<typeof WALLET_ADDRESS_CHANGED> {
  if (typeof directory?.replace !== 'function') {
    throw new KybWebhookError(
      'config_invalid',
      'walletAddressChangeHandler needs { replace(previousAddress, currentAddress) } that moves or deletes the entry of the previous address.',
    );
  }
  return async (event, context) => {
    const previous = event.data.previous_wallet_address;
    const named = event.data.wallet_address;
    // A "change" to the same address (in any letter case) or to nothing named: the previous address must still stop
    // resolving, and nothing may take its place.
    const current = named === undefined || named === '' || named.toLowerCase() === previous.toLowerCase() ? undefined : named;
    await directory.replace(previous, current, event, context);
  };
}
