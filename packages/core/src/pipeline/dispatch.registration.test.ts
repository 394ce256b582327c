// Handlers registered after deliveries have run (issue 11 §1, mutation survivors): the receiver caches each type's
// handler list, so every registration must reach the next delivery, and a second handler for a type runs beside the
// first instead of replacing it. A failure's HandlerError keeps the first error as its cause.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { HandlerError } from './dispatch.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

function setup() {
  const receiver = createReceiver({ secrets: { '1': 'endpoint-secret' } });
  const ran: string[] = [];
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, ran, deliver };
}

const unknownType = () =>
  ({ ...testEvents.dataRequestRefused(), event: 'kyb.future.thing' }) as unknown as TestEnvelope;

describe('handler registration', () => {
  it('runs a second on() handler for a type beside the first', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => void ran.push('first'));
    receiver.on('kyb.data_request.refused', () => void ran.push('second'));
    await deliver(testEvents.dataRequestRefused());
    expect(ran).toEqual(['first', 'second']);
  });

  it('runs an on() handler registered after a delivery of that type', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => void ran.push('first'));
    await deliver(testEvents.dataRequestRefused());
    receiver.on('kyb.data_request.refused', () => void ran.push('later'));
    await deliver(testEvents.dataRequestRefused());
    expect(ran).toEqual(['first', 'first', 'later']);
  });

  it('runs an onAny() handler registered after a delivery of a registered type', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => void ran.push('on'));
    await deliver(testEvents.dataRequestRefused());
    receiver.onAny(() => void ran.push('any'));
    await deliver(testEvents.dataRequestRefused());
    expect(ran).toEqual(['on', 'on', 'any']);
  });

  it('runs an onAny() handler registered after a delivery of a type without on() handlers', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.onAny(() => void ran.push('any-1'));
    await deliver(testEvents.dataRequestRefused());
    receiver.onAny(() => void ran.push('any-2'));
    await deliver(testEvents.dataRequestRefused());
    expect(ran).toEqual(['any-1', 'any-1', 'any-2']);
  });

  it('runs an onUnknown() handler registered after a delivery of an unknown type', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.onUnknown(() => void ran.push('unknown-1'));
    await deliver(unknownType());
    receiver.onUnknown(() => void ran.push('unknown-2'));
    await deliver(unknownType());
    expect(ran).toEqual(['unknown-1', 'unknown-1', 'unknown-2']);
  });

  it('runs an onUnknown() handler registered after a delivery of an unknown type that has on() handlers', async () => {
    const { receiver, ran, deliver } = setup();
    receiver.on('kyb.future.thing' as never, () => void ran.push('on'));
    await deliver(unknownType());
    receiver.onUnknown(() => void ran.push('unknown'));
    await deliver(unknownType());
    expect(ran).toEqual(['on', 'on', 'unknown']);
  });
});

describe('the HandlerError onError handlers receive', () => {
  it('carries the first failure as its cause', async () => {
    const { receiver, deliver } = setup();
    const first = new Error('first handler failed');
    receiver.on('kyb.data_request.refused', () => {
      throw first;
    });
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('second handler failed');
    });
    const seen: HandlerError[] = [];
    receiver.onError((error) => void seen.push(error));
    await deliver(testEvents.dataRequestRefused());
    expect(seen.map((error) => ({ cause: error.cause, failures: error.errors.length }))).toEqual([
      { cause: first, failures: 2 },
    ]);
  });

  it('is named HandlerError and says how many handlers failed for which event', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('first handler failed');
    });
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('second handler failed');
    });
    const seen: HandlerError[] = [];
    receiver.onError((error) => void seen.push(error));
    const event = testEvents.dataRequestRefused();
    await deliver(event);
    expect(seen.map((error) => [error.name, error.message])).toEqual([
      ['HandlerError', `2 handler(s) failed for kyb.data_request.refused ${event.event_id}`],
    ]);
  });
});

describe('on() for a type nothing can authenticate on this receiver', () => {
  // An inline key set needs a usable RS256 key at creation: the test signer's, read once beforeAll has made it.
  const attestation = () => ({
    issuer: 'https://kyb.example.com',
    audience: 'b2f7c3e0-0000-4000-8000-000000000000',
    jwks: signer.jwks,
  });

  it('warns once per type, at registration, when the receiver has no secrets and the type carries no attestation', () => {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({ attestation: attestation(), logger: (entry) => logs.push(entry) });
    receiver.on('kyb.data_request.pending_approval', () => {});
    receiver.on(['kyb.data_request.pending_approval', 'kyb.data_request.released'], () => {});
    receiver.on('kyb.future.thing' as never, () => {}); // an unknown type may be a new attested one
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'warn',
        eventType: 'kyb.data_request.pending_approval',
        message: expect.stringMatching(
          /no secrets .* answered 200 unauthenticated .*fetched from the KYB API.* `secrets`/,
        ),
      }),
    ]);
  });

  it('says nothing when the receiver has secrets', () => {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({
      secrets: { '1': 'endpoint-secret' },
      attestation: attestation(),
      logger: (entry) => logs.push(entry),
    });
    receiver.on('kyb.data_request.pending_approval', () => {});
    expect(logs).toEqual([]);
  });
});
