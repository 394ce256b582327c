// A check that fails for a reason of its own, not because of the delivery (the platform's crypto throws or cannot
// import the secret), is no refusal of the sender: it is answered 500 internal_error, which the service retries,
// never a 4xx that would blame the delivery, and the log keeps the cause.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { platformCrypto as nodeCrypto } from '../verify/crypto/node.js';
import type { PlatformCrypto } from '../verify/crypto/types.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 24, 11, 0, 0);
const SECRET = 'internal-errors-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

async function deliverWith(crypto: PlatformCrypto) {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({ secrets: { '1': SECRET }, now: () => NOW, crypto, logger: (e) => logs.push(e) });
  let handled = 0;
  receiver.onAny(() => void (handled += 1));
  const { headers, body } = await signer.sign(testEvents.dataRequestPendingApproval());
  const answer = await receiver.receive({ method: 'POST', headers, body });
  return { answer: { status: answer.status, code: answer.code }, handled, logs };
}

describe('a signature check that fails for a reason of its own', () => {
  it('when the HMAC throws: 500 internal_error, its cause logged, no handler run', async () => {
    const cause = new TypeError('HMAC unavailable');
    const { answer, handled, logs } = await deliverWith({
      ...nodeCrypto,
      verifyHmac: () => {
        throw cause;
      },
    });
    expect({ answer, handled }).toEqual({ answer: { status: 500, code: 'internal_error' }, handled: 0 });
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'internal_error',
        error: expect.objectContaining({ message: 'HMAC unavailable' }),
      }),
    ]);
  });

  it('when the secret cannot be imported: 500 internal_error, its cause logged, no handler run', async () => {
    const { answer, handled, logs } = await deliverWith({
      ...nodeCrypto,
      importHmacSecret: () => Promise.reject(new Error('no Web Crypto here')),
    });
    expect({ answer, handled }).toEqual({ answer: { status: 500, code: 'internal_error' }, handled: 0 });
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'internal_error',
        error: expect.objectContaining({ message: 'no Web Crypto here' }),
      }),
    ]);
  });
});
