import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../test-kit.js';
import type { DedupeStore } from './store/dedupe.js';
import { ERRORS, KybWebhookError } from './errors.js';
import { createMemoryStore } from './store/memory-store.js';
import { createReceiver } from './receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'verify-secret' } });
});

function receiverWithSpies(overrides: { secrets?: Record<string, string> | undefined } = {}) {
  const inner = createMemoryStore();
  const store: DedupeStore = {
    claim: vi.fn(inner.claim),
    complete: vi.fn(inner.complete),
    release: vi.fn(inner.release),
  };
  const logger = vi.fn();
  const receiver = createReceiver({
    secrets: { '1': 'verify-secret' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    store,
    logger,
    ...overrides,
  });
  const handler = vi.fn();
  receiver.onAny(handler);
  return { receiver, store, logger, handler };
}

async function thrown(promise: Promise<unknown>): Promise<KybWebhookError> {
  try {
    await promise;
  } catch (error) {
    return error as KybWebhookError;
  }
  throw new Error('expected verify to throw');
}

describe('receiver.verify: verification only, in one call', () => {
  it('resolves a genuine attested release with its claims and answers', async () => {
    const { receiver } = receiverWithSpies();
    const { headers, body, envelope } = await signer.sign(testEvents.dataRequestReleased(), { attempt: 2 });
    const verified = await receiver.verify({ method: 'POST', headers, body });
    expect(verified.event.event_id).toBe(envelope.event_id);
    expect(verified.authentication).toEqual({ hmac: { version: '1' }, attestation: true });
    expect(verified.claims).toMatchObject({ event_id: envelope.event_id, stream_id: envelope.stream_id });
    expect([...verified.answers!].length).toBeGreaterThan(0);
    expect(verified.deliveryAttempt).toBe(2);
  });

  it('touches no store, runs no handler and logs nothing', async () => {
    const { receiver, store, logger, handler } = receiverWithSpies();
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    await receiver.verify({ method: 'POST', headers, body });
    await receiver.verify({ method: 'POST', headers, body }).catch(() => {});
    expect(store.claim).not.toHaveBeenCalled();
    expect(handler).not.toHaveBeenCalled();
    expect(logger).not.toHaveBeenCalled();
  });

  it.each([
    ['a forged HMAC', { secret: 'whsec_forged' }, 'signature_mismatch'],
    ['an attestation under an unknown kid', { attestation: 'stranger' }, 'attestation_invalid'],
    ['a released event without attestation', { attest: false }, 'attestation_missing'],
  ])('throws the code receive would answer for %s', async (_what, options, code) => {
    const { receiver } = receiverWithSpies();
    const stranger = await createTestSigner();
    const released = testEvents.dataRequestReleased();
    const signOptions = 'attestation' in options ? { attestation: await stranger.attest(released) } : options;
    const { headers, body } = await signer.sign(released, signOptions);
    const error = await thrown(receiver.verify({ method: 'POST', headers, body }));
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error.code).toBe(code);
    const answered = await receiver.receive({ method: 'POST', headers, body });
    expect({ code: answered.code, status: answered.status }).toEqual({
      code,
      status: ERRORS[code as keyof typeof ERRORS].status,
    });
  });

  it('throws body_too_large and method_not_allowed like receive', async () => {
    const { receiver } = receiverWithSpies();
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    expect((await thrown(receiver.verify({ method: 'GET', headers, body }))).code).toBe('method_not_allowed');
    const huge = new Uint8Array(receiver.maxBodyBytes + 1);
    expect((await thrown(receiver.verify({ method: 'POST', headers, body: huge }))).code).toBe('body_too_large');
  });

  it('refuses an event nothing authenticates on an attestation-only receiver', async () => {
    const { receiver } = receiverWithSpies({ secrets: undefined });
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const error = await thrown(receiver.verify({ method: 'POST', headers, body }));
    expect(error.code).toBe('attestation_missing');
    expect(error.message).toMatch(/Nothing authenticates this delivery/);
  });

  it('answers the same event again (no dedupe: that is the caller\u2019s)', async () => {
    const { receiver } = receiverWithSpies();
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const first = await receiver.verify({ method: 'POST', headers, body });
    const second = await receiver.verify({ method: 'POST', headers, body });
    expect(second.event.event_id).toBe(first.event.event_id);
  });
});
