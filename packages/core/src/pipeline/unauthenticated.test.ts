/**
 * Issue 11 §1: attestation-only receivers (attestation configured, no `secrets`). Events without an attestation
 * cannot be authenticated there (spec 5.4): they must not write the store, grow memory, change what happens to a
 * genuine event, or be mistaken for verified events by handlers.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimOptions, DedupeStore } from '../store/dedupe.js';
import { HandlerRegistry } from './dispatch.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW });
});

/** A memory store that counts the claims it gets, to show which deliveries touch it. */
function countingStore(options: { maxEntries?: number } = {}) {
  const inner = createMemoryStore({ now: () => NOW, ...options });
  const claimed: string[] = [];
  const store: DedupeStore = {
    claim: (eventId: string, claimOptions: ClaimOptions) => {
      claimed.push(eventId);
      return inner.claim(eventId, claimOptions);
    },
    complete: (eventId, token, completeOptions) => inner.complete(eventId, token, completeOptions),
    release: (eventId, token) => inner.release(eventId, token),
  };
  return { store, claimed };
}

function attestationOnly(overrides: Partial<ReceiverOptions> = {}) {
  const receiver = createReceiver({
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    ...overrides,
  });
  const verified = vi.fn();
  const unknown = vi.fn();
  const any = vi.fn();
  receiver.on('kyb.business.wallet_address_changed', verified).on('kyb.data_request.pending_approval', verified);
  receiver.onUnknown(unknown).onAny(any);
  /** A delivery as a forger without the attestation key makes it: no HMAC, no attestation. */
  const forge = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope, { attest: false });
    delete headers['service-kyb-signature'];
    return receiver.receive({ method: 'POST', headers, body });
  };
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, verified, unknown, any, forge, deliver };
}

describe('attestation-only receiver: events without attestation', () => {
  it('acknowledges them 200 unauthenticated without touching the store', async () => {
    const { store, claimed } = countingStore();
    const { forge } = attestationOnly({ store });
    const result = await forge(testEvents.dataRequestPendingApproval());
    expect(result.status).toBe(200);
    expect(result.code).toBe('unauthenticated');
    expect(result.body).toEqual({ received: true, code: 'unauthenticated' });
    expect(result.event).toBeUndefined();
    expect(claimed).toEqual([]);
  });

  it('never hands them to on, onAny or onUnknown handlers', async () => {
    const { forge, verified, unknown, any } = attestationOnly();
    await forge(testEvents.dataRequestPendingApproval());
    await forge({ ...testEvents.dataRequestPendingApproval(), event: 'kyb.something.new' });
    expect(verified).not.toHaveBeenCalled();
    expect(unknown).not.toHaveBeenCalled();
    expect(any).not.toHaveBeenCalled();
  });

  it.each([
    ['upper case', 'kyb.business.Wallet_address_changed'],
    ['a trailing space', 'kyb.business.wallet_address_changed '],
    ['a NUL', 'kyb.business.wallet_address_changed\u0000'],
    ['a KELVIN SIGN look-alike', 'kyb.business.wallet_address_changed'.replace('k', '\u212a')],
  ])('never calls a variant of an attested type with %s a verified event', async (_name, type) => {
    const { forge, unknown, any } = attestationOnly();
    const result = await forge({ ...testEvents.businessWalletAddressChanged(), event: type });
    expect(result.code).toMatch(/^(unauthenticated|envelope_invalid)$/);
    expect(unknown).not.toHaveBeenCalled();
    expect(any).not.toHaveBeenCalled();
  });

  it('runs onUnauthenticated handlers, marked unauthenticated, with no claims', async () => {
    const { receiver, forge } = attestationOnly();
    const seen = vi.fn();
    receiver.onUnauthenticated(seen);
    const envelope = testEvents.dataRequestRefused();
    expect((await forge(envelope)).code).toBe('unauthenticated');
    expect(seen).toHaveBeenCalledTimes(1);
    const [event, context] = seen.mock.calls[0]!;
    expect(event.event_id).toBe(envelope.event_id);
    expect(context.authentication).toEqual({ hmac: null, attestation: false });
    expect(context.claims).toBeUndefined();
    expect(context.signal).toBeInstanceOf(AbortSignal);
  });

  it('answers 500 handler_failed when an onUnauthenticated handler throws, still without touching the store', async () => {
    const { store, claimed } = countingStore();
    const { receiver, forge } = attestationOnly({ store });
    receiver.onUnauthenticated(() => {
      throw new Error('boom');
    });
    expect((await forge(testEvents.dataRequestRefused())).code).toBe('handler_failed');
    expect(claimed).toEqual([]);
  });

  it('cannot evict the record of a genuine attested event by a flood of forged deliveries', async () => {
    const { store } = countingStore({ maxEntries: 100 });
    const { forge, deliver, verified } = attestationOnly({ store });
    const genuine = await signer.withAttestation(testEvents.businessWalletAddressChanged());
    expect((await deliver(genuine)).status).toBe(200);
    for (let i = 0; i < 300; i++) await forge(testEvents.dataRequestPendingApproval());
    const redelivery = await deliver(genuine);
    expect(redelivery.code).toBe('duplicate');
    expect(verified).toHaveBeenCalledTimes(1);
  });

  it('cannot mark a genuine event of the same id as done', async () => {
    const { receiver, forge, deliver } = attestationOnly();
    const handled = vi.fn();
    receiver.on('kyb.data_request.released', handled);
    const genuine = await signer.withAttestation(testEvents.dataRequestReleased());
    await forge({ ...testEvents.dataRequestRefused(), event_id: genuine.event_id, stream_id: genuine.stream_id });
    const result = await deliver(genuine);
    expect(result.status).toBe(200);
    expect(result.code).toBeUndefined();
    expect(handled).toHaveBeenCalledTimes(1);
  });

  it('still rejects an attested type that arrives without its attestation', async () => {
    const { forge } = attestationOnly();
    expect((await forge(testEvents.businessWalletAddressChanged())).code).toBe('attestation_missing');
  });
});

describe('handler resolution stays bounded', () => {
  it('keeps no per-type entry for event types nobody registered, however many arrive', () => {
    const registry = new HandlerRegistry();
    registry.add('kyb.data_request.released', () => {});
    registry.addAny(() => {});
    registry.addUnknown(() => {});
    const context = {} as never;
    for (let i = 0; i < 5_000; i++) {
      registry.run({ event: `kyb.invented.${i}`, event_id: '01J00000000000000000000000' } as never, context, false);
    }
    registry.run({ event: 'kyb.data_request.released' } as never, context, true);
    expect(registry['resolved'].size).toBe(1);
  });

  it('runs onUnknown handlers for unknown types only, and onAny for both', () => {
    const registry = new HandlerRegistry();
    const unknown = vi.fn();
    const any = vi.fn();
    registry.addUnknown(unknown);
    registry.addAny(any);
    registry.run({ event: 'kyb.data_request.refused' } as never, {} as never, true);
    registry.run({ event: 'kyb.brand.new' } as never, {} as never, false);
    expect(unknown).toHaveBeenCalledTimes(1);
    expect(any).toHaveBeenCalledTimes(2);
  });
});
