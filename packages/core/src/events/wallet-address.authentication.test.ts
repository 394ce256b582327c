import { beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent, createTestSigner, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import { walletAddressChangeHandler, type WalletAddressDirectory } from './wallet-address.js';

// Which addresses walletAddressChangeHandler trusts, by how the delivery was authenticated, and what an operator
// reads in the log when it refuses to act on addresses the attestation does not sign.

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const OLD = '0xAbC0000000000000000000000000000000000001';
const NEW = '0xdef0000000000000000000000000000000000002';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'wallet-secret' } });
});

/** A directory that records its calls and, like a real one, fails on an address that is not a string. */
function recordingDirectory() {
  const calls: [unknown, unknown][] = [];
  const directory: WalletAddressDirectory = {
    replace(previous, current) {
      calls.push([previous, current]);
      previous.toLowerCase();
    },
  };
  return { calls, directory };
}

function receiverFor(directory: WalletAddressDirectory, options: { secrets: boolean }) {
  const logged: LogEntry[] = [];
  const receiver = createReceiver({
    ...(options.secrets ? { secrets: { '1': 'wallet-secret' } } : {}),
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: (entry) => logged.push(entry),
  });
  receiver.on('kyb.business.wallet_address_changed', walletAddressChangeHandler(directory));
  const deliver = async (data: Record<string, unknown>, claims?: Record<string, unknown>) => {
    const event = createTestEvent('kyb.business.wallet_address_changed', { data });
    const { headers, body } = await signer.sign(event, { attest: true, ...(claims ? { claims } : {}) });
    return receiver.receive({ method: 'POST', headers, body });
  };
  /** The message of the error the handler threw, as the receiver logs it with its handler_failed entry. */
  const handlerError = () => {
    const failed = logged.find((entry) => entry.code === 'handler_failed')?.error;
    return (failed?.errors?.[0] ?? failed?.cause)?.message;
  };
  return { receiver, deliver, handlerError };
}

describe('walletAddressChangeHandler on a receiver with secrets (the whole body is authenticated)', () => {
  it('treats an empty new address as none: the previous address is forgotten and nothing takes its place', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver } = receiverFor(directory, { secrets: true });
    expect((await deliver({ previous_wallet_address: OLD, wallet_address: '' })).status).toBe(200);
    expect(calls).toEqual([[OLD, undefined]]);
  });

  it('takes both addresses from the body, which the HMAC authenticates, when the claims sign neither', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver } = receiverFor(directory, { secrets: true });
    const answer = await deliver({ previous_wallet_address: OLD, wallet_address: NEW }, {});
    expect(answer.status).toBe(200);
    expect(calls).toEqual([[OLD, NEW]]);
  });
});

describe('walletAddressChangeHandler on a receiver without secrets (only the claims are authenticated)', () => {
  it('forgets the previous address when the claims sign it and neither claims nor body name a new one', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver } = receiverFor(directory, { secrets: false });
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: undefined },
      { previous_wallet_address: OLD },
    );
    expect(answer.status).toBe(200);
    expect(calls).toEqual([[OLD, undefined]]);
  });

  it('forgets the previous address when the body names an empty new address the claims do not sign', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver } = receiverFor(directory, { secrets: false });
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: '' },
      { previous_wallet_address: OLD },
    );
    expect(answer.status).toBe(200);
    expect(calls).toEqual([[OLD, undefined]]);
  });

  it('moves the entry to the signed new address even when the body carries it too', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver } = receiverFor(directory, { secrets: false });
    const addresses = { previous_wallet_address: OLD, wallet_address: NEW };
    expect((await deliver(addresses, addresses)).status).toBe(200);
    expect(calls).toEqual([[OLD, NEW]]);
  });

  it('changes nothing when the claims do not sign the previous address, and the log says which claim is missing', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver, handlerError } = receiverFor(directory, { secrets: false });
    const answer = await deliver({ previous_wallet_address: OLD, wallet_address: undefined }, {});
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 500, code: 'handler_failed' });
    expect(calls).toEqual([]);
    expect(handlerError()).toBe(
      'walletAddressChangeHandler: the receiver has no HMAC secrets and the attestation does not sign ' +
        'previous_wallet_address, so the addresses in this event are not authenticated and no entry was changed. ' +
        "Pass the endpoint secret as `secrets` (e.g. { '1': process.env.KYB_SECRET_V1 }); the service retries the delivery.",
    );
  });

  it('changes nothing when the claims sign only a new address, not the previous one', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver, handlerError } = receiverFor(directory, { secrets: false });
    const answer = await deliver({ previous_wallet_address: OLD, wallet_address: NEW }, { wallet_address: NEW });
    expect(answer.code).toBe('handler_failed');
    expect(calls).toEqual([]);
    expect(handlerError()).toContain('the attestation does not sign previous_wallet_address,');
  });

  it('names wallet_address in the log when the claims sign the previous address but not the new one in the body', async () => {
    const { calls, directory } = recordingDirectory();
    const { deliver, handlerError } = receiverFor(directory, { secrets: false });
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: NEW },
      { previous_wallet_address: OLD },
    );
    expect(answer.code).toBe('handler_failed');
    expect(calls).toEqual([]);
    expect(handlerError()).toContain('the attestation does not sign wallet_address, so the addresses');
  });

  it.each([
    ['a number', 42],
    ['null', null],
  ])('refuses a signed new address that is %s, naming wallet_address in the log', async (_what, signed) => {
    const { calls, directory } = recordingDirectory();
    const { deliver, handlerError } = receiverFor(directory, { secrets: false });
    const answer = await deliver(
      { previous_wallet_address: OLD, wallet_address: undefined },
      { previous_wallet_address: OLD, wallet_address: signed },
    );
    expect(answer.code).toBe('handler_failed');
    expect(calls).toEqual([]);
    expect(handlerError()).toContain('the attestation does not sign wallet_address, so the addresses');
  });

  it('trusts the body of an event replayed from the API (authenticated by the API key), not only the claims', async () => {
    const { calls, directory } = recordingDirectory();
    const { receiver } = receiverFor(directory, { secrets: false });
    const event = createTestEvent('kyb.business.wallet_address_changed', {
      data: { previous_wallet_address: OLD, wallet_address: NEW },
    });
    const fetched = structuredClone(await signer.withAttestation(event, { attest: true }));
    const result = await receiver.replay(fetched);
    expect(result.status).toBe(200);
    expect(calls).toEqual([[OLD, NEW]]);
  });
});
