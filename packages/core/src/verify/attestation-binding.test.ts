/**
 * Issue 11 §2: an attestation authenticates exactly one event. A token re-wrapped in an envelope of another type or
 * with other signed data is rejected before dedupe, so the genuine event is still processed when it arrives.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimOptions, DedupeStore } from '../store/dedupe.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'endpoint-secret' } });
});

const MODES: [string, Partial<ReceiverOptions>][] = [
  ['HMAC and attestation', { secrets: { '1': 'endpoint-secret' } }],
  ['attestation only', {}],
];

describe.each(MODES)('%s', (_mode, modeOptions) => {
  function setup() {
    const claimed: string[] = [];
    const inner = createMemoryStore({ now: () => NOW });
    const store: DedupeStore = {
      claim: (eventId: string, options: ClaimOptions) => (claimed.push(eventId), inner.claim(eventId, options)),
      complete: (eventId, token, options) => inner.complete(eventId, token, options),
      release: (eventId, token) => inner.release(eventId, token),
    };
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      store,
      ...modeOptions,
    });
    const handled = vi.fn();
    receiver.onAny(handled);
    // Exactly the envelope given: its own attestation, or none (never a fresh one from the signer).
    const deliver = async (envelope: TestEnvelope) => {
      const { headers, body } = await signer.sign(
        envelope,
        envelope.attestation ? { attestation: envelope.attestation } : { attest: false },
      );
      return receiver.receive({ method: 'POST', headers, body });
    };
    return { deliver, handled, claimed };
  }

  /** The genuine event's token in an envelope of another type and data, with the same ids (and a valid HMAC). */
  function rewrap(genuine: TestEnvelope, as: TestEnvelope): TestEnvelope {
    return {
      ...as,
      event_id: genuine.event_id,
      stream_id: genuine.stream_id,
      seq: genuine.seq,
      attestation: genuine.attestation,
    };
  }

  const released = () => testEvents.dataRequestReleased();
  const walletChanged = () => testEvents.businessWalletAddressChanged();
  it.each<[string, () => TestEnvelope, () => TestEnvelope]>([
    [
      'a release as a pending approval (a type the spec marks unattested)',
      released,
      () => testEvents.dataRequestPendingApproval(),
    ],
    ['a release as a refusal', released, () => testEvents.dataRequestRefused()],
    ['a release as a wallet address change', released, walletChanged],
    [
      'a release as an unknown type',
      released,
      () => ({ ...testEvents.dataRequestRefused(), event: 'kyb.business.risk_flagged' }),
    ],
    ['a wallet address change as a release', walletChanged, released],
    ['a wallet address change as a signed signature request', walletChanged, () => testEvents.signatureRequestSigned()],
  ])('rejects %s, and still processes the genuine event afterwards', async (_name, genuineOf, otherOf) => {
    const { deliver, handled } = setup();
    const genuine = await signer.withAttestation(genuineOf());
    const relabelled = await deliver(
      rewrap(genuine, { ...otherOf(), data: { ...otherOf().data, request_id: genuine.stream_id } }),
    );
    expect(relabelled.status).toBe(401);
    expect(relabelled.code).toBe('attestation_relabelled');
    expect(handled).not.toHaveBeenCalled();
    const result = await deliver(genuine);
    expect(result.status).toBe(200);
    expect(result.code).toBeUndefined();
    expect(handled).toHaveBeenCalledTimes(1);
  });

  it('keeps the type in the dedupe key when no claim fixes it, so a re-wrap as an unknown type cannot hide the genuine event', async () => {
    const { deliver, handled, claimed } = setup();
    const genuine = await signer.withAttestation(walletChanged());
    const rewrapped = await deliver(
      rewrap(genuine, { ...walletChanged(), event: 'kyb.business.risk_flagged', data: {} }),
    );
    expect(rewrapped.status).toBe(200);
    const result = await deliver(genuine);
    expect(result.status).toBe(200);
    expect(result.code).toBeUndefined();
    expect(handled).toHaveBeenCalledTimes(2);
    // Every unknown type shares one key (see the next test); the known type keeps its own.
    expect(claimed).toEqual([`${genuine.event_id}:unknown`, `${genuine.event_id}:kyb.business.wallet_address_changed`]);
  });

  it('lets one token run at most once per kind of key, however many types it is re-wrapped under', async () => {
    const { deliver, handled, claimed } = setup();
    const genuine = await signer.withAttestation(walletChanged());
    const answers = [];
    for (let i = 0; i < 20; i++)
      answers.push(await deliver(rewrap(genuine, { ...walletChanged(), event: `kyb.invented.type_${i}`, data: {} })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(handled).toHaveBeenCalledTimes(1);
    expect(new Set(claimed)).toEqual(new Set([`${genuine.event_id}:unknown`]));
    expect((await deliver(genuine)).code).toBeUndefined();
    expect(handled).toHaveBeenCalledTimes(2);
  });

  it('dedupes on the event id alone when the token signs the type', async () => {
    const { deliver, claimed } = setup();
    const envelope = walletChanged();
    const genuine = { ...envelope, attestation: await signer.attest(envelope, { claims: { event: envelope.event } }) };
    expect((await deliver(genuine)).status).toBe(200);
    expect(claimed).toEqual([genuine.event_id]);
  });

  it.each(['event', 'event_type'])('rejects a token whose %s claim names another type', async (claim) => {
    const { deliver, handled } = setup();
    const envelope = walletChanged();
    const token = await signer.attest(envelope, { claims: { [claim]: envelope.event } });
    const result = await deliver({ ...envelope, event: 'kyb.business.risk_flagged', attestation: token });
    expect(result.code).toBe('attestation_relabelled');
    expect(handled).not.toHaveBeenCalled();
  });

  it('rejects data that differs from the same field in the claims', async () => {
    const { deliver } = setup();
    const envelope = walletChanged();
    const token = await signer.attest(envelope, {
      claims: { previous_wallet_address: envelope.data.previous_wallet_address },
    });
    const result = await deliver({
      ...envelope,
      data: { ...envelope.data, previous_wallet_address: '0xattacker' },
      attestation: token,
    });
    expect(result.code).toBe('attestation_relabelled');
  });

  it('accepts data equal to the same field in the claims, objects compared by value', async () => {
    const { deliver } = setup();
    const envelope = { ...walletChanged(), data: { previous_wallet_address: '0xabc', routing: { a: 1, b: [1, 2] } } };
    const token = await signer.attest(envelope, {
      claims: { previous_wallet_address: '0xabc', routing: { b: [1, 2], a: 1 } },
    });
    expect((await deliver({ ...envelope, attestation: token })).status).toBe(200);
  });

  it('rejects a data.request_id that is not the signed request', async () => {
    const { deliver } = setup();
    const genuine = await signer.withAttestation(released());
    const result = await deliver({ ...genuine, data: { ...genuine.data, request_id: 'dr_other' } });
    expect(result.code).toBe('attestation_relabelled');
  });

  it('rejects a release whose token carries no released answers', async () => {
    const { deliver } = setup();
    const envelope = released();
    const token = await signer.attest(envelope, { claims: { answers: undefined } });
    expect((await deliver({ ...envelope, attestation: token })).code).toBe('attestation_relabelled');
  });
});

describe('a receiver without secrets, flooded with one token under invented types', () => {
  it('keeps the records of genuine events: their redeliveries are still duplicates', async () => {
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      store: createMemoryStore({ now: () => NOW, maxEntries: 10 }),
    });
    const handled = vi.fn();
    receiver.onAny(handled);
    const deliver = async (envelope: TestEnvelope) => {
      const { headers, body } = await signer.sign(envelope, { attestation: envelope.attestation as string });
      return receiver.receive({ method: 'POST', headers, body });
    };
    const release = await signer.withAttestation(testEvents.dataRequestReleased());
    expect((await deliver(release)).code).toBeUndefined();
    const token = await signer.withAttestation(testEvents.businessWalletAddressChanged());
    for (let i = 0; i < 30; i++) await deliver({ ...token, event: `kyb.invented.type_${i}`, data: {} });
    const redelivered = await deliver(release);
    expect(redelivered.status).toBe(200);
    expect(redelivered.code).toBe('duplicate');
    expect(handled).toHaveBeenCalledTimes(2); // the release once, the first invented type once
  });
});

// Spec 2.8 does not show the claim a release's values travel in: attestation.answersClaim names it.
describe('the claim that holds a release', () => {
  function receiverWith(answersClaim?: string) {
    const logged: string[] = [];
    const receiver = createReceiver({
      attestation: {
        issuer: signer.issuer,
        audience: signer.audience,
        jwks: signer.jwks,
        ...(answersClaim ? { answersClaim } : {}),
      },
      now: () => NOW,
      store: createMemoryStore({ now: () => NOW }),
      logger: (entry) => logged.push(`${entry.code ?? ''} ${entry.message} ${entry.detail ?? ''}`),
    });
    const values: unknown[] = [];
    receiver.on('kyb.data_request.released', (_event, context) => {
      values.push(...[...(context.answers ?? [])].map((answer) => answer.value));
    });
    return { receiver, values, logged };
  }

  async function releaseWithClaims(claims: Record<string, unknown>) {
    const envelope = testEvents.dataRequestReleased();
    const attestation = await signer.attest(envelope, { claims: { answers: undefined, ...claims } });
    return signer.sign({ ...envelope, attestation }, { attestation });
  }

  const answers = [{ name: 'company_name', subject_type: 'business', subject: '0xb1', value: 'Acme Ltd' }];

  it('reads the answers from the claim the option names', async () => {
    const { receiver, values } = receiverWith('released_values');
    const { headers, body } = await releaseWithClaims({
      released_values: answers,
      answers: [{ ...answers[0], value: 'decoy' }],
    });
    await expect(receiver.receive({ method: 'POST', headers, body })).resolves.toMatchObject({ status: 200 });
    expect(values).toEqual(['Acme Ltd']);
  });

  it.each([
    ['the default search', undefined, /set attestation\.answersClaim/],
    ['a named claim that is absent', 'released_values', /"released_values", as attestation\.answersClaim says/],
  ])(
    'refuses a release without its answers under %s, and the log line names the option',
    async (_what, answersClaim, message) => {
      const { receiver, values, logged } = receiverWith(answersClaim);
      const { headers, body } = await releaseWithClaims(answersClaim ? { answers } : {});
      await expect(receiver.receive({ method: 'POST', headers, body })).resolves.toMatchObject({
        status: 401,
        body: { error: { code: 'attestation_relabelled' } },
      });
      expect(values).toEqual([]);
      expect(logged.join('\n')).toMatch(message);
    },
  );

  it('refuses an answersClaim that is not a claim name: config_invalid', () => {
    expect(() =>
      createReceiver({
        attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks, answersClaim: '' },
      }),
    ).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  });
});
