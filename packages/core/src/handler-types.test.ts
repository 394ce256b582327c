import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../testing/src/index.js';
import { KybWebhookError } from './errors.js';
import { createReceiver } from './receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'types-secret' } });
});

function setup() {
  const receiver = createReceiver({ secrets: { '1': 'types-secret' } });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope, { attest: false });
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver };
}

describe('receiver.on with a list of types', () => {
  it('runs the handler for each listed type, and narrows the event by event.event', async () => {
    const { receiver, deliver } = setup();
    const seen: string[] = [];
    receiver.on(['kyb.data_request.refused', 'kyb.signature_request.refused'], (event) => {
      // Both refusal types carry a reason; only the signature refusal carries a digest.
      if (event.event === 'kyb.signature_request.refused') seen.push(`signature:${event.data.digest.length > 0}`);
      else seen.push(`data:${event.data.reason}`);
    });
    await deliver(testEvents.dataRequestRefused({ data: { reason: 'declined' } }));
    await deliver(testEvents.signatureRequestRefused());
    expect(seen).toEqual(['data:declined', 'signature:true']);
  });

  it('does not run it for a type not in the list', async () => {
    const { receiver, deliver } = setup();
    const seen: string[] = [];
    receiver.on(['kyb.data_request.refused'], (event) => void seen.push(event.event));
    expect((await deliver(testEvents.signatureRequestRefused())).status).toBe(200);
    expect(seen).toEqual([]);
  });
});

describe('receiver.on refuses a mistake at registration with config_invalid', () => {
  it.each([
    ['an empty list', [], /name at least one event type/],
    ['a type with a space', 'kyb.data_request refused', /"kyb.data_request refused" is not an event type/],
    ['an empty type', '', /"" is not an event type/],
    ['a number in the list', ['kyb.data_request.refused', 7], /a number is not an event type/],
    ['undefined (a missing constant)', undefined, /undefined is not an event type/],
  ])('%s', (_what, type, message) => {
    const { receiver } = setup();
    const register = () => receiver.on(type as never, () => {});
    expect(register).toThrow(KybWebhookError);
    expect(register).toThrow(message);
  });

  it('a handler that is not a function', () => {
    const { receiver } = setup();
    const register = () => receiver.on('kyb.data_request.refused', 'handleRefusal' as never);
    expect(register).toThrow(KybWebhookError);
    expect(register).toThrow(/the handler must be a function; got a string/);
  });

  it('still accepts a type this version does not know, for new attested types', async () => {
    const { receiver } = setup();
    expect(() => receiver.on('kyb.business.sanctions_flagged' as never, () => {})).not.toThrow();
  });
});
