// receiver.replay verifies a fetched event as a delivery is verified after its HMAC: an attestation needs a configured
// verifier, the data must match its type's schema, the context says what authenticated it (and carries a release's
// answers), and typed handlers or onUnknown run by type, as for a delivery.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 23, 8, 40, 0);
const SECRET = 'replay-verification-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup(withAttestation = true) {
  return createReceiver({
    secrets: { '1': SECRET },
    ...(withAttestation
      ? { attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks } }
      : {}),
    now: () => NOW,
    logger: false,
  });
}

// As parsed from the API's JSON.
const fetched = (event: TestEnvelope): unknown => structuredClone(event);

describe('receiver.replay refuses', () => {
  it('an attested event when the receiver has no attestation verifier', async () => {
    const receiver = setup(false);
    const handler = vi.fn();
    receiver.onAny(handler);
    const event = await signer.withAttestation(testEvents.dataRequestReleased());
    expect((await receiver.replay(fetched(event))).code).toBe('attestation_not_configured');
    expect(handler).not.toHaveBeenCalled();
  });

  it('event data that does not match its type', async () => {
    const receiver = setup();
    const handler = vi.fn();
    receiver.onAny(handler);
    const event = { ...testEvents.dataRequestRefused(), data: { reason: 42 } } as unknown as TestEnvelope;
    const answer = await receiver.replay(fetched(event));
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 422, code: 'event_data_invalid' });
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('the context of a replayed event', () => {
  it('of an attested release: authenticated by the attestation, with its answers', async () => {
    const receiver = setup();
    const contexts: { authentication: { attestation: boolean }; answers?: { size: number } }[] = [];
    receiver.on('kyb.data_request.released', (_event, context) => {
      contexts.push(context as never);
    });
    const event = await signer.withAttestation(testEvents.dataRequestReleased());
    expect((await receiver.replay(fetched(event))).status).toBe(200);
    expect({
      attestation: contexts[0]?.authentication.attestation,
      answers: (contexts[0]?.answers?.size ?? 0) > 0,
    }).toEqual({ attestation: true, answers: true });
  });

  it('of an unattested event: not authenticated by an attestation, no answers', async () => {
    const receiver = setup();
    const contexts: { authentication: { attestation: boolean }; answers?: unknown }[] = [];
    receiver.on('kyb.data_request.refused', (_event, context) => {
      contexts.push(context as never);
    });
    expect((await receiver.replay(fetched(testEvents.dataRequestRefused()))).status).toBe(200);
    expect({ attestation: contexts[0]?.authentication.attestation, answers: contexts[0]?.answers }).toEqual({
      attestation: false,
      answers: undefined,
    });
  });
});

describe('handlers of a replayed event', () => {
  it('a known type runs its typed handler, not onUnknown', async () => {
    const receiver = setup();
    const typed = vi.fn();
    const unknown = vi.fn();
    receiver.on('kyb.data_request.refused', typed).onUnknown(unknown);
    await receiver.replay(fetched(testEvents.dataRequestRefused()));
    expect({ typed: typed.mock.calls.length, unknown: unknown.mock.calls.length }).toEqual({ typed: 1, unknown: 0 });
  });

  it('an unknown type runs onUnknown', async () => {
    const receiver = setup();
    const unknown = vi.fn();
    receiver.onUnknown(unknown);
    await receiver.replay(
      fetched({ ...testEvents.dataRequestRefused(), event: 'kyb.brand_new.thing' } as TestEnvelope),
    );
    expect(unknown).toHaveBeenCalledTimes(1);
  });
});
