// The envelope's "data is an object" rule (issue 11, mutation survivors): null, arrays and scalars are refused with
// 400 envelope_invalid before any handler runs, for a known event type and for one this version does not know.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW });
});

function setup() {
  const receiver = createReceiver({
    secrets: signer.secrets,
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
  });
  const handler = vi.fn();
  receiver.onAny(handler);
  return { receiver, handler };
}

describe.each([
  ['a known event type', () => testEvents.dataRequestPendingApproval()],
  [
    'an event type this version does not know',
    () => ({ ...testEvents.dataRequestPendingApproval(), event: 'kyb.future.thing' }),
  ],
])('data that is not an object, for %s', (_kind, envelope) => {
  it.each<[string, unknown]>([
    ['null', null],
    ['an array', []],
    ['a string', 'data'],
    ['a number', 1],
  ])('answers 400 envelope_invalid for %s and runs no handler', async (_case, data) => {
    const { receiver, handler } = setup();
    const signed = signer.signBytes(JSON.stringify({ ...envelope(), data }));
    const result = await receiver.receive({ method: 'POST', headers: signed.headers, body: signed.body });
    expect({ status: result.status, code: result.code, handled: handler.mock.calls.length }).toEqual({
      status: 400,
      code: 'envelope_invalid',
      handled: 0,
    });
  });
});
