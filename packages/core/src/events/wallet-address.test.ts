import { beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent, createTestSigner, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createReceiver } from '../receiver.js';
import { walletAddressChangeHandler, type WalletAddressDirectory } from './wallet-address.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const OLD = '0xAbC0000000000000000000000000000000000001';
const NEW = '0xdef0000000000000000000000000000000000002';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'wallet-secret' } });
});

/** The merchant's address book as the helper's docs describe it: lower-cased keys, entries moved, never copied. */
function addressBook() {
  const wallets = new Map<string, string>([[OLD.toLowerCase(), 'business-42']]);
  const calls: [string, string | undefined][] = [];
  const directory: WalletAddressDirectory = {
    replace(previous, current) {
      calls.push([previous, current]);
      const business = wallets.get(previous.toLowerCase());
      wallets.delete(previous.toLowerCase());
      if (business !== undefined && current !== undefined) wallets.set(current.toLowerCase(), business);
    },
  };
  const resolve = (address: string) => wallets.get(address.toLowerCase());
  return { wallets, calls, directory, resolve };
}

function receiverWith(directory: WalletAddressDirectory) {
  const receiver = createReceiver({
    secrets: { '1': 'wallet-secret' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
  });
  receiver.on('kyb.business.wallet_address_changed', walletAddressChangeHandler(directory));
  return async (data: Record<string, unknown>, eventId?: string) => {
    const event = createTestEvent('kyb.business.wallet_address_changed', {
      data,
      ...(eventId ? { event_id: eventId } : {}),
    });
    const { headers, body } = await signer.sign(event);
    return receiver.receive({ method: 'POST', headers, body });
  };
}

/** A receiver with no `secrets`: only the attestation authenticates (spec 5.4), so only its claims are trusted. */
function attestationOnlyReceiverWith(directory: WalletAddressDirectory) {
  const receiver = createReceiver({
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
  });
  receiver.on('kyb.business.wallet_address_changed', walletAddressChangeHandler(directory));
  return async (data: Record<string, unknown>, claims?: Record<string, unknown>) => {
    const event = createTestEvent('kyb.business.wallet_address_changed', { data });
    const { headers, body } = await signer.sign(event, { attest: true, ...(claims ? { claims } : {}) });
    return receiver.receive({ method: 'POST', headers, body });
  };
}

describe('walletAddressChangeHandler on a receiver without secrets (only the claims are authenticated)', () => {
  it('changes nothing and fails the delivery when the claims do not sign the addresses (forged data under a genuine token)', async () => {
    const book = addressBook();
    const deliver = attestationOnlyReceiverWith(book.directory);
    const answer = await deliver({ previous_wallet_address: OLD, wallet_address: '0xattacker' });
    expect(answer.status).toBe(500);
    expect(answer.code).toBe('handler_failed');
    expect(book.calls).toEqual([]);
    expect(book.resolve(OLD)).toBe('business-42');
  });

  it('applies the change when the claims sign the addresses (and the envelope carries the same values)', async () => {
    const book = addressBook();
    const deliver = attestationOnlyReceiverWith(book.directory);
    const addresses = { previous_wallet_address: OLD, wallet_address: NEW };
    expect((await deliver(addresses, addresses)).status).toBe(200);
    expect(book.calls).toEqual([[OLD, NEW]]);
    expect(book.resolve(NEW)).toBe('business-42');
  });

  it('changes nothing when the claims sign the previous address but the body names a new one they do not sign', async () => {
    const book = addressBook();
    const deliver = attestationOnlyReceiverWith(book.directory);
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: NEW },
      { previous_wallet_address: OLD },
    );
    expect(answer.code).toBe('handler_failed');
    expect(book.calls).toEqual([]);
  });

  it('takes the new address from the claims: data that drops it cannot turn a move into a deletion', async () => {
    const book = addressBook();
    const deliver = attestationOnlyReceiverWith(book.directory);
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: undefined },
      { previous_wallet_address: OLD, wallet_address: NEW },
    );
    expect(answer.status).toBe(200);
    expect(book.calls).toEqual([[OLD, NEW]]);
  });
});

describe('walletAddressChangeHandler (spec 6 rule 1)', () => {
  it('makes the previous address stop resolving before the delivery is acknowledged, and the new one resolve', async () => {
    const book = addressBook();
    const deliver = receiverWith(book.directory);
    const answer = await deliver({ previous_wallet_address: OLD, wallet_address: NEW });
    expect(answer.status).toBe(200);
    expect(book.resolve(OLD)).toBeUndefined();
    expect(book.resolve(NEW)).toBe('business-42');
  });

  it('keeps no entry under the previous address in any letter case (no alias)', async () => {
    const book = addressBook();
    const deliver = receiverWith(book.directory);
    await deliver({ previous_wallet_address: OLD.toUpperCase().replace('0X', '0x'), wallet_address: NEW });
    expect([...book.wallets.keys()]).toEqual([NEW.toLowerCase()]);
  });

  it('forgets the previous address even when the event names no new one', async () => {
    const book = addressBook();
    const deliver = receiverWith(book.directory);
    expect((await deliver({ previous_wallet_address: OLD, wallet_address: undefined })).status).toBe(200);
    expect(book.calls).toEqual([[OLD, undefined]]);
    expect(book.wallets.size).toBe(0);
  });

  it('never re-adopts the previous address when the "new" one is the same in another case', async () => {
    const book = addressBook();
    const deliver = receiverWith(book.directory);
    await deliver({ previous_wallet_address: OLD, wallet_address: OLD.toLowerCase() });
    expect(book.calls).toEqual([[OLD, undefined]]);
    expect(book.resolve(OLD)).toBeUndefined();
  });

  it('answers non-2xx when the directory fails, so the service retries and the retry completes the change', async () => {
    const book = addressBook();
    let failures = 1;
    const deliver = receiverWith({
      replace(previous, current, event, context) {
        if (failures-- > 0) throw new Error('database down');
        return book.directory.replace(previous, current, event, context);
      },
    });
    const eventId = '01KB0000000000000000000042';
    const first = await deliver({ previous_wallet_address: OLD, wallet_address: NEW }, eventId);
    expect({ status: first.status, code: first.code }).toEqual({ status: 500, code: 'handler_failed' });
    const retry = await deliver({ previous_wallet_address: OLD, wallet_address: NEW }, eventId);
    expect(retry.status).toBe(200);
    expect(book.resolve(OLD)).toBeUndefined();
    expect(book.resolve(NEW)).toBe('business-42');
  });

  it.each([
    ['nothing', undefined],
    ['an object without replace', { forget: () => undefined }],
  ])('refuses %s as the directory with config_invalid', (_what, directory) => {
    expect(() => walletAddressChangeHandler(directory as unknown as WalletAddressDirectory)).toThrow(KybWebhookError);
    expect(() => walletAddressChangeHandler(directory as unknown as WalletAddressDirectory)).toThrow(
      /replace\(previousAddress, currentAddress\)/,
    );
  });

  it('gives the refusal of a directory without replace the code config_invalid', () => {
    let thrown: unknown;
    try {
      walletAddressChangeHandler({} as unknown as WalletAddressDirectory);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KybWebhookError);
    expect((thrown as KybWebhookError).code).toBe('config_invalid');
  });
});
