import { Buffer } from 'node:buffer';
import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKybClient, KybApiError } from './index.js';

// A release whose genuinely signed claims disagree with the request it is served under: the local service signs the
// changed claims with its own key, so only the binding to this request can refuse it, and the message says which
// claim did not match (a claim's name, never its value).
let service: KybService;
beforeAll(async () => {
  service = await startKybService();
});
afterAll(async () => {
  await service.stop();
});

const client = () =>
  createKybClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    attestation: { issuer: service.issuer, audience: service.audience },
  });

async function releaseWith(change: Record<string, unknown>) {
  const id = await service.createDataRequest();
  const released = await service.release(id);
  const payload = (released.attestation as string).split('.')[1] as string;
  const claims: Record<string, unknown> = {
    ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
    ...change,
  };
  for (const [name, value] of Object.entries(change)) if (value === undefined) delete claims[name];
  service.forgeRelease(id, await service.signToken(claims));
  return {
    id,
    result: await client()
      .release(id)
      .catch((caught: unknown) => caught),
  };
}

describe('a genuinely signed release bound to something else', () => {
  it.each([
    ['an event_id that is not a string', { event_id: 5 }, 'attestation_relabelled: mismatch in event_id'],
    ['a seq that is not a number', { seq: '3' }, 'attestation_relabelled: mismatch in seq'],
    [
      'another request_id',
      { request_id: 'dr_other' },
      'attestation_relabelled: mismatch in request_id, data.request_id',
    ],
    ['another stream_id', { stream_id: 'dr_other' }, 'attestation_relabelled: mismatch in stream_id'],
    [
      'another event',
      { event: 'kyb.data_request.pending_approval' },
      'attestation_relabelled: mismatch in event (signed event)',
    ],
    ['no event_id', { event_id: undefined }, 'attestation_invalid'],
    ['no seq', { seq: undefined }, 'attestation_invalid'],
  ])('with %s is rejected, the message naming why', async (_what, change, why) => {
    const { id, result } = await releaseWith(change);
    expect(result).toBeInstanceOf(KybApiError);
    expect(result).toMatchObject({ status: 200, code: 'attestation_rejected', attempts: 1 });
    expect((result as Error).message).toBe(
      `GET /api/v1/kyb/data-requests/${id}/release: the release's attestation was rejected (${why}); it is not a genuine release of this request.`,
    );
  });
});
