import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { isKnownEvent } from './event-types.js';
import { createReceiver } from '../receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'known-secret' } });
});

describe('isKnownEvent in an onAny handler', () => {
  it('narrows known events by event.event and tells new types apart', async () => {
    const receiver = createReceiver({ secrets: { '1': 'known-secret' } });
    const seen: string[] = [];
    receiver.onAny((event) => {
      if (!isKnownEvent(event)) return void seen.push(`unknown:${event.event}`);
      switch (event.event) {
        case 'kyb.data_request.refused':
          return void seen.push(`refused:${event.data.reason}`);
        case 'kyb.signature_request.refused':
          return void seen.push(`signature refused:${event.data.digest.slice(0, 2)}`);
        default:
          return void seen.push(`other:${event.event}`);
      }
    });
    const deliver = async (envelope: TestEnvelope) => {
      const { headers, body } = await signer.sign(envelope, { attest: false });
      return receiver.receive({ method: 'POST', headers, body });
    };
    await deliver(testEvents.dataRequestRefused({ data: { reason: 'expired' } }));
    await deliver(testEvents.signatureRequestRefused({ data: { digest: '0xabc' } }));
    await deliver({ ...testEvents.dataRequestRefused(), event: 'kyb.future.thing' } as unknown as TestEnvelope);
    await deliver(testEvents.dataRequestPendingApproval());
    expect(seen).toEqual([
      'refused:expired',
      'signature refused:0x',
      'unknown:kyb.future.thing',
      'other:kyb.data_request.pending_approval',
    ]);
  });

  it.each([
    ['a known type', { event: 'kyb.data_request.released' }, true],
    ['a new type', { event: 'kyb.business.sanctions_flagged' }, false],
    ['a prototype name', { event: 'constructor' }, false],
    ['no type', {}, false],
    // Plain JavaScript can hand it anything: it answers false rather than throwing, and never coerces a type.
    ['undefined', undefined, false],
    ['null', null, false],
    ['a known type inside a list', { event: ['kyb.data_request.released'] }, false],
    [
      'an object whose string form is a known type',
      { event: { toString: (): string => 'kyb.data_request.released' } },
      false,
    ],
  ])('answers %s', (_what, event, expected) => {
    expect(isKnownEvent(event as never)).toBe(expected);
  });
});
