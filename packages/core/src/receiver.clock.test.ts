// A receiver whose `now` answers no number (a clock without return) answered 200 to a delivery signed in 2020 under
// a kv that ended in 2021 with an attestation that expired in 2020: every time comparison with NaN is false. Now the
// delivery is refused with a retryable 500 internal_error, and the service redelivers once the clock is fixed.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../test-kit.js';
import { createReceiver } from './receiver.js';
import type { ReceiverOptions } from './receiver-types.js';

const SIGNED_AT = Date.UTC(2020, 0, 1);
const SECRET = 'receiver-clock-secret';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': SECRET }, now: SIGNED_AT });
});

const attestation = () => ({ issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks });

describe('a receiver whose clock answers no number', () => {
  it.each<[string, () => Partial<ReceiverOptions>]>([
    [
      'HMAC and attestation, a version that ended in 2021',
      () => ({ secrets: { '1': { secret: SECRET, notAfter: Date.UTC(2021, 0, 1) } }, attestation: attestation() }),
    ],
    ['attestation only', () => ({ attestation: attestation() })],
  ])('refuses a 2020 delivery with 500 internal_error (%s)', async (_case, options) => {
    const receiver = createReceiver({ ...options(), now: (() => {}) as () => number, logger: false });
    let handled = 0;
    receiver.onAny(() => void (handled += 1));
    const { headers, body } = await signer.sign(testEvents.businessWalletAddressChanged(), { expiresInSeconds: 60 });
    const answer = await receiver.receive({ method: 'POST', headers, body });
    expect({ status: answer.status, code: answer.code, handled }).toEqual({
      status: 500,
      code: 'internal_error',
      handled: 0,
    });
  });

  it('logs why, naming the kind of reading and not its value', async () => {
    const logs: { code?: string; detail?: string }[] = [];
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => Number.NaN,
      logger: (entry) => logs.push(entry as never),
    });
    const { headers, body } = await signer.sign(testEvents.dataRequestPendingApproval());
    await receiver.receive({ method: 'POST', headers, body });
    expect(logs).toEqual([
      expect.objectContaining({
        code: 'internal_error',
        detail: 'the clock (now) answered NaN, not Unix milliseconds',
      }),
    ]);
  });
});
