import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createAttestationVerifier } from './attestation.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

// An attestation pulled from the KYB API is "the same attestation the webhook would carry" (spec 4.2), so a gap
// filled hours later, or a release pulled within retention, can carry a token past its exp. Those are verified in
// full except exp; a pushed delivery with the same token is still refused.
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const NOW_S = NOW / 1000;
const EXPIRED = { iat: NOW_S - 7200, exp: NOW_S - 3600 };
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'freshness-secret' } });
});

/** seq 0 pending, seq 1 released (attested, expired an hour ago), seq 2 pending. */
async function streamWithExpiredRelease(): Promise<TestEnvelope[]> {
  const [pending, released, next] = testStream([
    'kyb.data_request.pending_approval',
    'kyb.data_request.released',
    'kyb.data_request.pending_approval',
  ]);
  return [pending!, await signer.withAttestation(released!, { claims: EXPIRED }), next!];
}

function receiverFetching(api: TestEnvelope[]) {
  const seen: { seq: number; fetched: boolean }[] = [];
  const receiver = createReceiver({
    secrets: { '1': 'freshness-secret' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    store: createMemoryStore({ now: () => NOW }),
    ordering: streamOrdering({
      mode: 'enforce',
      firstSeq: 0,
      fetchEventsAfter: async function* (streamId, afterSeq) {
        for (const event of api) if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
      },
    }),
  });
  receiver.onAny((event, context) => {
    seen.push({ seq: event.seq, fetched: context.authentication.fetched === true });
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, seen, deliver };
}

describe('attestations fetched from the KYB API after their exp', () => {
  it('backfills a gap whose attested event expired before it was fetched', async () => {
    const stream = await streamWithExpiredRelease();
    const { seen, deliver } = receiverFetching(stream);
    expect((await deliver(stream[0]!)).status).toBe(200);
    const answer = await deliver(stream[2]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    expect(seen).toEqual([
      { seq: 0, fetched: false },
      { seq: 1, fetched: true },
      { seq: 2, fetched: false },
    ]);
  });

  it('still refuses the same expired attestation when it is pushed to the endpoint', async () => {
    const stream = await streamWithExpiredRelease();
    const { seen, deliver } = receiverFetching(stream);
    await deliver(stream[0]!);
    const answer = await deliver(stream[1]!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 401, code: 'attestation_invalid' });
    expect(seen.map((event) => event.seq)).toEqual([0]);
  });

  it('refuses a fetched event whose attestation is otherwise wrong (another audience)', async () => {
    const [pending, released, next] = testStream([
      'kyb.data_request.pending_approval',
      'kyb.data_request.released',
      'kyb.data_request.pending_approval',
    ]);
    const foreign = await signer.withAttestation(released!, { claims: { ...EXPIRED, aud: 'another-merchant' } });
    const { seen, deliver } = receiverFetching([pending!, foreign, next!]);
    await deliver(pending!);
    const answer = await deliver(next!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'backfill_invalid' });
    expect(seen.map((event) => event.seq)).toEqual([0]);
  });

  it('refuses a fetched attestation issued in the future', async () => {
    const [, released] = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.released']);
    const future = await signer.withAttestation(released!, { claims: { iat: NOW_S + 3600, exp: NOW_S + 7200 } });
    const verify = createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      () => NOW,
    );
    await expect(verify(future.attestation!, future, { fetched: true })).rejects.toMatchObject({
      code: 'attestation_invalid',
    });
  });

  it('verifies an expired token only when the caller says it was fetched', async () => {
    const [, released] = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.released']);
    const expired = await signer.withAttestation(released!, { claims: EXPIRED });
    const verify = createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      () => NOW,
    );
    await expect(verify(expired.attestation!, expired)).rejects.toMatchObject({ code: 'attestation_invalid' });
    await expect(verify(expired.attestation!, expired, { fetched: false })).rejects.toMatchObject({
      code: 'attestation_invalid',
    });
    await expect(verify(expired.attestation!, expired, { fetched: true })).resolves.toMatchObject({
      event_id: expired.event_id,
    });
  });
});
