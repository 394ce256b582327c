/**
 * Backfill cannot be turned against the merchant (issue 26 §3), over real HTTP to the local KYB service: copies of
 * one captured, authenticated delivery ahead of its stream's cursor cost O(1) events calls with the merchant's API
 * key, not one each, while the gap they reveal cannot be filled.
 */
import { createMemoryStore, createReceiver, streamOrdering } from '@kyb-webhooks/core';
import { createKybClient } from '@kyb-webhooks/client';
import { createTestSigner, randomSecret, startKybService } from '@kyb-webhooks/testing';
import { afterEach, expect, it } from 'vitest';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

it.each([
  ['200 at once', true],
  ['200 one after the other', false],
])(
  '%s: copies of a captured delivery whose gap the API cannot fill make at most two events calls',
  async (_what, concurrent) => {
    // A purged release served without its attestation: its seq can never be filled verifiably.
    const service = await startKybService({ apiShape: { purgedEventsWithoutAttestation: true } });
    cleanups.push(() => service.stop());
    const secrets = { '1': randomSecret() };
    const client = createKybClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
    const receiver = createReceiver({
      secrets,
      attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      store: createMemoryStore(),
      ordering: streamOrdering({
        mode: 'enforce',
        fetchEventsAfter: (s, a, signal) => client.events(s, { afterSeq: a, signal }),
      }),
    });
    const handled: number[] = [];
    receiver.onAny((event) => {
      handled.push(event.seq);
    });

    const id = await service.createDataRequest();
    await service.release(id);
    service.purge(id);
    const later = await service.emit(id, 'kyb.data_request.pending_approval');
    // The attacker's capture: seq 2, genuinely signed, replayed at will (the endpoint never got seqs 0 and 1).
    const signer = await createTestSigner({ secrets });
    const capture = await signer.sign(later, { attest: false });
    const deliver = () => receiver.receive({ method: 'POST', headers: capture.headers, body: capture.body });

    const results = concurrent ? await Promise.all(Array.from({ length: 200 }, deliver)) : [];
    if (!concurrent) for (let copy = 0; copy < 200; copy++) results.push(await deliver());

    // The first copy reads the stream from its start and runs seq 0; the next finds the cursor at 0 and asks once from
    // there; every later copy gets the remembered answer (ordering.backfillRetryAfterMs): two calls, not 200.
    const eventsCalls = service.apiCalls.filter((call) => call.path.includes('/events'));
    expect(eventsCalls.length).toBeLessThanOrEqual(2);
    // Every copy is answered, never 2xx: the permanent stall's code, or 409 while the first copy backfills.
    const answers = results.map((result) => `${result.status} ${result.code}`);
    const allowed = concurrent ? ['502 backfill_unfillable', '409 in_progress'] : ['502 backfill_unfillable'];
    expect(answers.filter((answer) => !allowed.includes(answer))).toEqual([]);
    expect(answers).toContain('502 backfill_unfillable');
    // Seq 0 was filled in (it is verifiable); the release was not, so nothing after it ran.
    expect(handled).toEqual([0]);
  },
);
