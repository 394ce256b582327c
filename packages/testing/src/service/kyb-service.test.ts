import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAttestationVerifier, createReceiver, createMemoryStore } from '@kyb-webhooks/core';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultReleasedAnswers, type TestEnvelope } from '../fixtures.js';
import { startKybService, type KybService, type KybServiceOptions } from './kyb-service.js';

interface Received {
  envelope: TestEnvelope;
  headers: IncomingMessage['headers'];
}

/** A merchant endpoint whose answer per delivery the test decides; records what arrived. */
async function startEndpoint(
  answer: (envelope: TestEnvelope, attempt: number) => number | { status: number; location?: string } = () => 200,
) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/webhooks/kyb') return response.writeHead(404).end();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as TestEnvelope;
      received.push({ envelope, headers: request.headers });
      const result = answer(envelope, Number(request.headers['service-delivery-attempt']));
      const { status, location } = typeof result === 'number' ? { status: result, location: undefined } : result;
      response.writeHead(status, location ? { location } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/webhooks/kyb`,
    origin,
    received,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setUp(answer?: Parameters<typeof startEndpoint>[0], options: KybServiceOptions = {}) {
  const endpoint = await startEndpoint(answer);
  const service = await startKybService({ timeScale: 1e-5, ...options, endpoint: { url: endpoint.url } });
  cleanups.push(endpoint.close, () => service.stop());
  return { endpoint, service };
}

function seqs(service: KybService, streamId?: string): [number, number | null][] {
  return service.attempts(streamId).map((attempt) => [attempt.seq, attempt.status]);
}

describe('delivery headers and body', () => {
  it('POSTs the envelope with the headers of spec 2.4, and a real receiver accepts it', async () => {
    const { service, endpoint } = await setUp();
    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    const receiver = createReceiver({
      secrets: service.secrets,
      attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      store: createMemoryStore(),
    });
    const [, released] = endpoint.received;
    expect(released?.headers).toMatchObject({
      'content-type': 'application/json',
      'service-event-id': released?.envelope.event_id,
      'service-delivery-attempt': '1',
      'service-kyb-api-version': released?.envelope.api_version,
      'user-agent': 'service-kyb-webhooks/1',
      'service-kyb-signature': expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64},kv=1$/),
    });
    const result = await receiver.receive({
      method: 'POST',
      headers: released!.headers as Record<string, string>,
      body: new TextEncoder().encode(JSON.stringify(released!.envelope)),
    });
    expect(result.status).toBe(200);
  });

  it('attests the release with the released answers and binds it to the request', async () => {
    const { service } = await setUp();
    const id = await service.createDataRequest();
    const released = await service.release(id);
    const claims = decodeJwt(released.attestation as string);
    expect(claims).toMatchObject({
      request_id: id,
      stream_id: id,
      seq: 1,
      event_id: released.event_id,
      iss: service.issuer,
    });
    expect(released.data).toMatchObject({ request_id: id, attestation_kid: service.kid });
    expect(Array.isArray(claims.answers)).toBe(true);
  });

  it.each([
    ['kyb.data_request.pending_approval', false],
    ['kyb.data_request.refused', false],
  ])('does not attest %s', async (type) => {
    const { service } = await setUp();
    const id = await service.createDataRequest();
    if (type === 'kyb.data_request.refused') await service.refuse(id, 'declined');
    expect(service.request(id)?.events.at(-1)).not.toHaveProperty('attestation');
  });

  it('signature requests produce pending_approval then signed with the same digest', async () => {
    const { service } = await setUp();
    const id = await service.createSignatureRequest({ digest: '0xabc' });
    await service.vote(id, 'member_1', true);
    expect(service.request(id)?.events.map((event) => [event.event, event.data.digest])).toEqual([
      ['kyb.signature_request.pending_approval', '0xabc'],
      ['kyb.signature_request.signed', '0xabc'],
    ]);
  });

  it('starts seq at the configured base', async () => {
    const { service } = await setUp(undefined, { seqBase: 1 });
    const id = await service.createDataRequest();
    await service.release(id);
    expect(service.request(id)?.events.map((event) => event.seq)).toEqual([1, 2]);
  });

  it('refuses a request that cannot be afforded with 402 insufficient_credit, before any event', async () => {
    const { service } = await setUp(undefined, { creditCents: 1000 });
    await expect(service.createDataRequest({ priceCents: 1500 })).rejects.toMatchObject({
      status: 402,
      code: 'insufficient_credit',
    });
    expect(service.attempts()).toEqual([]);
    await expect(service.createDataRequest({ priceCents: 900 })).resolves.toMatch(/^dr_/);
    expect(service.creditCents).toBe(100);
  });
});

describe('order and retries', () => {
  it('holds seq N+1 until seq N succeeded', async () => {
    const { service } = await setUp((envelope, attempt) => (envelope.seq === 0 && attempt < 3 ? 500 : 200));
    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    expect(seqs(service)).toEqual([
      [0, 500],
      [0, 500],
      [0, 200],
      [1, 200],
    ]);
  });

  it('sends seq N+1 only after N exhausted its retries, and records N as exhausted', async () => {
    const { service } = await setUp((envelope) => (envelope.seq === 0 ? 503 : 200), { retry: { maxAttempts: 3 } });
    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    expect(seqs(service)).toEqual([
      [0, 503],
      [0, 503],
      [0, 503],
      [1, 200],
    ]);
    expect(service.exhausted.map((event) => event.seq)).toEqual([0]);
  });

  it('waits the exponential schedule, scaled, between attempts', async () => {
    const { service } = await setUp(() => 500, { timeScale: 1e-4, retry: { maxAttempts: 4 } });
    expect([2, 3, 4].map((attempt) => service.delayBefore(attempt))).toEqual([6, 12, 24]);
    const id = await service.createDataRequest();
    await service.idle();
    const times = service.attempts(id).map((attempt) => attempt.attemptedAt);
    const gaps = times.slice(1).map((time, index) => time - (times[index] as number));
    expect(gaps.map((gap, index) => gap >= [6, 12, 24][index]! - 1)).toEqual([true, true, true]);
  });

  it('the real schedule spans about 9 hours', async () => {
    const service = await startKybService({ timeScale: 1 });
    cleanups.push(() => service.stop());
    const total = Array.from({ length: 9 }, (_, index) => service.delayBefore(index + 2)).reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(8);
    expect(total / 3_600_000).toBeLessThan(10);
  });

  it('keeps streams independent: a failing stream does not hold another', async () => {
    const { service } = await setUp((envelope) => (envelope.stream_id === 'dr_failing' ? 500 : 200), {
      retry: { maxAttempts: 3 },
    });
    await service.createDataRequest({ id: 'dr_failing' });
    await service.createDataRequest({ id: 'dr_fine' });
    await service.idle();
    expect(seqs(service, 'dr_fine')).toEqual([[0, 200]]);
  });

  it('never follows a redirect: a 3xx is a failed attempt, retried', async () => {
    const target = await startEndpoint();
    cleanups.push(target.close);
    const { service } = await setUp((_envelope, attempt) =>
      attempt === 1 ? { status: 307, location: target.url } : 200,
    );
    await service.createDataRequest();
    await service.idle();
    expect(target.received).toHaveLength(0);
    expect(service.attempts().map((attempt) => [attempt.status, attempt.error])).toEqual([
      [307, 'redirect not followed'],
      [200, undefined],
    ]);
  });

  it('records a connection failure with status null and retries it', async () => {
    const service = await startKybService({
      timeScale: 1e-5,
      retry: { maxAttempts: 2 },
      endpoint: { url: 'http://127.0.0.1:9/webhooks' },
    });
    cleanups.push(() => service.stop());
    await service.createDataRequest();
    await service.idle();
    expect(service.attempts().map((attempt) => [attempt.attempt, attempt.status, attempt.error])).toEqual([
      [1, null, expect.stringMatching(/^network error/)],
      [2, null, expect.stringMatching(/^network error/)],
    ]);
  });

  it.each([
    ["the code of a receiver's answer", '{"received":true,"code":"duplicate"}', 'duplicate'],
    [
      'the code of an error answer',
      '{"error":{"code":"handler_failed","message":"A handler failed."}}',
      'handler_failed',
    ],
    ['nothing of a code that is not code-shaped', '{"code":"Bearer kyb_live_123 leaked"}', undefined],
    ['nothing of an answer that is not JSON', 'ok', undefined],
  ])('the delivery log keeps %s (response_code), never the body', async (_what, body, code) => {
    const server = createServer((request, response) => {
      request.resume().on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;
    const service = await startKybService({ timeScale: 1e-5, endpoint: { url } });
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    await service.idle();
    expect(service.attempts().map((attempt) => attempt.responseCode)).toEqual([code]);
    const response = await fetch(`${service.baseUrl}/api/v1/kyb/data-requests/${id}/deliveries`, {
      headers: { authorization: service.apiKey },
    });
    const text = await response.text();
    expect((JSON.parse(text) as { deliveries: { response_code?: string }[] }).deliveries[0]?.response_code).toBe(code);
    expect(text).not.toContain('leaked');
  });
});

describe('quarantine, reactivate and redeliver', () => {
  it('quarantines after repeated failures, keeps queuing, and delivers the backlog in order after reactivate', async () => {
    let healthy = false;
    const { service, endpoint } = await setUp(() => (healthy ? 200 : 500), { quarantineAfter: 3 });
    const id = await service.createDataRequest();
    await service.idle();
    expect(service.quarantined).toBe(true);
    expect(service.attempts()).toHaveLength(3);
    await service.release(id);
    await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
    await service.idle();
    expect(service.attempts()).toHaveLength(3); // nothing sent while quarantined
    expect(service.pending(id)).toBe(3); // and nothing dropped

    healthy = true;
    expect(service.reactivate()).toBe(true);
    await service.idle();
    expect(
      endpoint.received
        .filter((r) => r.headers['service-delivery-attempt'] !== undefined)
        .slice(3)
        .map((r) => r.envelope.seq),
    ).toEqual([0, 1, 2]);
    expect(service.quarantined).toBe(false);
    expect(service.pending()).toBe(0);
  });

  it.each<[string, { maxAttempts?: number; quarantineAfter?: number }, number[]]>([
    ['the failure that starts the quarantine is also the last retry', { maxAttempts: 3, quarantineAfter: 3 }, [0, 1]],
    // The defaults: seq 0 is given up after 10 attempts (the stream moves on), seq 1's 10th failure is the 20th in a row.
    ['the defaults', {}, [1, 2]],
  ])('drops no event when %s: it stays queued and is delivered after reactivate', async (_what, retry, held) => {
    let healthy = false;
    const { quarantineAfter, ...attempts } = retry;
    const { service, endpoint } = await setUp(() => (healthy ? 200 : 503), {
      retry: attempts,
      ...(quarantineAfter ? { quarantineAfter } : {}),
    });
    const id = await service.createDataRequest();
    await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
    if (retry.maxAttempts === undefined)
      await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
    await service.idle();
    expect(service.quarantined).toBe(true);
    healthy = true;
    service.reactivate();
    await service.idle();
    const accepted = endpoint.received
      .filter((_request, index) => service.attempts()[index]?.status === 200)
      .map((request) => request.envelope.seq);
    expect(accepted).toEqual(held);
    expect(service.exhausted.map((event) => event.seq)).toEqual(retry.maxAttempts === undefined ? [0] : []);
  });

  it('POST reactivate through the API clears the quarantine', async () => {
    let healthy = false;
    const { service } = await setUp(() => (healthy ? 200 : 500), { quarantineAfter: 2 });
    await service.createDataRequest();
    await service.idle();
    healthy = true;
    const response = await fetch(`${service.baseUrl}/api/v1/kyb/webhook-endpoint/reactivate`, {
      method: 'POST',
      headers: { authorization: service.apiKey },
    });
    expect([response.status, await response.json()]).toEqual([200, { reactivated: true, was_quarantined: true }]);
    await service.idle();
    expect(service.attempts().at(-1)?.status).toBe(200);
  });

  it('redeliver queues the whole stream again with the same event ids, in order', async () => {
    const { service, endpoint } = await setUp();
    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    expect(service.redeliver(id)).toBe(2);
    await service.idle();
    const ids = endpoint.received.map((r) => r.envelope.event_id);
    expect(ids.slice(2)).toEqual(ids.slice(0, 2));
    expect(endpoint.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '1', '2', '2']);
  });

  it('carries the same attestation on a redelivery', async () => {
    const { service, endpoint } = await setUp();
    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    service.redeliver(id);
    await service.idle();
    expect(endpoint.received[3]?.envelope.attestation).toBe(endpoint.received[1]?.envelope.attestation);
  });
});

describe('API', () => {
  async function api(service: KybService, path: string, init: RequestInit = {}, key: string | null = service.apiKey) {
    const headers: Record<string, string> = key === null ? {} : { authorization: key };
    const response = await fetch(service.baseUrl + path, { ...init, headers });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      headers: response.headers,
    };
  }

  it.each([
    ['no key', null],
    ['a wrong key', 'wrong'],
    ['the key as Bearer', 'Bearer KEY'],
  ])('answers 401 unauthorized with %s', async (_what, key) => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    const sent = key === 'Bearer KEY' ? `Bearer ${service.apiKey}` : key;
    const { status, body } = await api(service, `/api/v1/kyb/data-requests/${id}/deliveries`, {}, sent);
    expect([status, (body.error as { code: string }).code]).toEqual([401, 'unauthorized']);
    expect(service.apiCalls.at(-1)).toMatchObject({ authorized: false, status: 401 });
    expect(JSON.stringify(service.apiCalls)).not.toContain(service.apiKey);
  });

  it('release: 404 not_released, 200 the attestation of the webhook, 410 payload_expired', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    const path = `/api/v1/kyb/data-requests/${id}/release`;
    expect((await api(service, path)).body).toEqual({ error: { code: 'not_released', message: expect.any(String) } });
    const released = await service.release(id);
    expect(await api(service, path)).toMatchObject({ status: 200, body: { attestation: released.attestation } });
    service.purge(id);
    expect(await api(service, path)).toMatchObject({ status: 410, body: { error: { code: 'payload_expired' } } });
  });

  it('events: after_seq and limit page the stream, with has_more', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    for (let index = 0; index < 4; index++)
      await service.emit(id, 'kyb.data_request.pending_approval', { request_id: id });
    const { body } = await api(service, `/api/v1/kyb/data-requests/${id}/events?after_seq=1&limit=2`);
    expect([(body.events as TestEnvelope[]).map((event) => event.seq), body.has_more]).toEqual([[2, 3], true]);
    const last = await api(service, `/api/v1/kyb/data-requests/${id}/events?after_seq=3&limit=2`);
    expect([(last.body.events as TestEnvelope[]).map((event) => event.seq), last.body.has_more]).toEqual([[4], false]);
  });

  it.each(['abc', '1.5'])('events: after_seq=%s is a 400 invalid_request', async (value) => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    const { status, body } = await api(service, `/api/v1/kyb/data-requests/${id}/events?after_seq=${value}`);
    expect([status, (body.error as { code: string }).code]).toEqual([400, 'invalid_request']);
  });

  it('redeliver answers 202 with the number queued; an unknown request is a 404', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    expect(await api(service, `/api/v1/kyb/data-requests/${id}/redeliver`, { method: 'POST' })).toMatchObject({
      status: 202,
      body: { queued: 1 },
    });
    expect((await api(service, '/api/v1/kyb/data-requests/dr_nope/redeliver', { method: 'POST' })).status).toBe(404);
  });

  it('injected failures answer with the status and Retry-After, then the real answer resumes', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    service.failNextApiCalls(1, { status: 503, retryAfter: '2' });
    const failed = await api(service, `/api/v1/kyb/data-requests/${id}/deliveries`);
    expect([failed.status, failed.headers.get('retry-after')]).toEqual([503, '2']);
    expect((await api(service, `/api/v1/kyb/data-requests/${id}/deliveries`)).status).toBe(200);
  });
});

describe('what the events carry', () => {
  it('attests an event of a type it does not know when emit() asks (spec 5.6, 9.2), and a real receiver verifies it', async () => {
    const { service, endpoint } = await setUp();
    const id = await service.createDataRequest();
    const unknown = await service.emit(id, 'kyb.data_request.reviewed', { request_id: id }, { attest: true });
    const bare = await service.emit(id, 'kyb.data_request.reviewed', { request_id: id });
    const unsigned = await service.emit(id, 'kyb.data_request.released', { request_id: id }, { attest: false });
    expect(bare.attestation).toBeUndefined();
    expect(unsigned.attestation).toBeUndefined();
    const verify = createAttestationVerifier(
      { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      Date.now,
    );
    await expect(verify(unknown.attestation as string, unknown)).resolves.toMatchObject({
      event_id: unknown.event_id,
      seq: unknown.seq,
    });
    await service.idle();
    expect(endpoint.received.map((request) => request.envelope.event_id)).toContain(unknown.event_id);
  });

  it('bills a release for the fields it released, never above the quote, and says whether they include PII', async () => {
    const service = await startKybService({ creditCents: 100_000 });
    cleanups.push(() => service.stop());
    const business = defaultReleasedAnswers().filter((answer) => answer.subject_type === 'business');
    const cheap = await service.release(
      await service.createDataRequest({ answers: business.slice(0, 1), priceCents: 500 }),
    );
    expect(cheap.data).toMatchObject({
      field_count: 1,
      pii_included: false,
      charge: { charged_cents: 150, lines: [{ field: 'company_name', cents: 150 }] },
    });
    const full = await service.release(await service.createDataRequest());
    expect(full.data).toMatchObject({ field_count: 4, pii_included: true, charge: { charged_cents: 1100 } });
    const capped = await service.release(await service.createDataRequest({ priceCents: 300 }));
    expect(capped.data).toMatchObject({ charge: { charged_cents: 300, lines: [] } });
  });

  it('dates every event from its own clock, unknown types included', async () => {
    const pinned = Date.UTC(2026, 0, 1);
    const service = await startKybService({ now: () => pinned });
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    const [pending] = service.request(id)!.events;
    expect(pending!.timestamp).toBe(pinned / 1000);
    expect(pending!.data.expires_at).toBe('2026-01-08T00:00:00.000Z');
    const unknown = await service.emit(id, 'kyb.data_request.reviewed', { request_id: id });
    expect(unknown.timestamp).toBe(pinned / 1000);
  });

  it('signs with the highest secret version by default, named versions included', async () => {
    const endpoint = await startEndpoint();
    cleanups.push(endpoint.close);
    const named = await startKybService({
      timeScale: 1e-5,
      endpoint: { url: endpoint.url, secrets: { v1: 'old-secret', v2: 'new-secret' } },
    });
    cleanups.push(() => named.stop());
    await named.createDataRequest();
    await named.idle();
    expect(named.attempts().map((attempt) => attempt.secretVersion)).toEqual(['v2']);
  });
});

describe('key rotation', () => {
  it('signs with the new kid after rotateKeys and keeps the old key published until retired', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const oldKid = service.kid;
    const before = await service.release(await service.createDataRequest());
    const newKid = await service.rotateKeys();
    const after = await service.release(await service.createDataRequest());
    expect(decodeProtectedHeader(after.attestation as string).kid).toBe(newKid);
    const published = async () =>
      ((await (await fetch(service.jwksUrl)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
    expect(await published()).toEqual([oldKid, newKid]);

    const verify = createAttestationVerifier(
      { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      Date.now,
    );
    await expect(verify(before.attestation as string, before)).resolves.toMatchObject({ event_id: before.event_id });
    await expect(verify(after.attestation as string, after)).resolves.toMatchObject({ event_id: after.event_id });

    expect(service.retireKey(oldKid)).toBe(true);
    expect(await published()).toEqual([newKid]);
    const fresh = createAttestationVerifier(
      { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      Date.now,
    );
    await expect(fresh(before.attestation as string, before)).rejects.toMatchObject({ code: 'attestation_invalid' });
  });

  it('refuses to retire the current key', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    expect(() => service.retireKey(service.kid)).toThrow(/rotateKeys\(\) first/);
  });
});

describe('control API and creation', () => {
  it('POST {prefix} creates a data request (201), and answers 402 insufficient_credit when it cannot be afforded', async () => {
    const service = await startKybService({ creditCents: 600 });
    cleanups.push(() => service.stop());
    const create = (body: unknown) =>
      fetch(`${service.baseUrl}/api/v1/kyb/data-requests`, {
        method: 'POST',
        headers: { authorization: service.apiKey },
        body: JSON.stringify(body),
      });
    const created = await create({ price_cents: 500 });
    const { id } = (await created.json()) as { id: string };
    expect([created.status, service.request(id)?.state]).toEqual([201, 'pending_approval']);
    const refused = await create({ price_cents: 500 });
    expect([refused.status, await refused.json()]).toEqual([
      402,
      {
        error: {
          code: 'insufficient_credit',
          message: expect.any(String),
          required_cents: 500,
          available_cents: 100,
          currency: 'usd',
        },
      },
    ]);
  });

  it('keeps seq in call order when events are appended concurrently', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    const [released, extra] = await Promise.all([
      service.release(id),
      service.emit(id, 'kyb.data_request.pending_approval', { request_id: id }),
    ]);
    expect([released.seq, extra.seq]).toEqual([1, 2]);
    expect(service.request(id)?.events.map((event) => event.seq)).toEqual([0, 1, 2]);
  });

  it('approve releases a data request and signs a signature request', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const data = await service.createDataRequest();
    const signature = await service.createSignatureRequest();
    expect([(await service.approve(data)).event, (await service.approve(signature)).event]).toEqual([
      'kyb.data_request.released',
      'kyb.signature_request.signed',
    ]);
  });

  it('votes below the threshold release nothing; the threshold releases', async () => {
    const service = await startKybService({ approvalThreshold: 2 });
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    await service.vote(id, 'member_1', true);
    expect(service.request(id)?.state).toBe('pending_approval');
    await service.vote(id, 'member_2', true);
    expect(service.request(id)?.state).toBe('released');
  });

  it('expire refuses with reason expired; a refused request cannot be released', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const id = await service.createDataRequest();
    expect((await service.expire(id)).data).toMatchObject({ reason: 'expired', request_id: id });
    await expect(service.release(id)).rejects.toMatchObject({ status: 409, code: 'request_not_pending' });
  });

  it('the wallet change is attested and a receiver accepts it', async () => {
    const { service, endpoint } = await setUp();
    await service.changeBusinessWallet({ previous: '0xold', next: '0xnew' });
    await service.idle();
    const [delivery] = endpoint.received;
    expect(delivery?.envelope).toMatchObject({
      event: 'kyb.business.wallet_address_changed',
      data: { previous_wallet_address: '0xold' },
    });
    const receiver = createReceiver({
      secrets: service.secrets,
      attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      store: createMemoryStore(),
    });
    const result = await receiver.receive({
      method: 'POST',
      headers: delivery!.headers as Record<string, string>,
      body: new TextEncoder().encode(JSON.stringify(delivery!.envelope)),
    });
    expect(result.status).toBe(200);
  });

  it('signs with the current secret version after the endpoint secrets rotate', async () => {
    const { service, endpoint } = await setUp();
    await service.createDataRequest();
    await service.idle();
    service.setEndpoint({ url: endpoint.url, secrets: { '1': 'whsec_old', '2': 'whsec_new' } });
    await service.createDataRequest();
    await service.idle();
    expect(endpoint.received.map((r) => String(r.headers['service-kyb-signature']).split('kv=')[1])).toEqual([
      '1',
      '2',
    ]);
  });

  it('a slow endpoint times out: status null, error timeout, and the attempt is retried', async () => {
    let slow = true;
    const server = createServer((request, response) => {
      request.resume();
      if (slow) {
        slow = false;
        return; // never answers
      }
      response.writeHead(200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;
    const service = await startKybService({ timeScale: 1e-5, deliveryTimeoutMs: 400, endpoint: { url } });
    cleanups.push(() => service.stop());
    await service.createDataRequest();
    await service.idle();
    expect(service.attempts().map((attempt) => [attempt.status, attempt.error])).toEqual([
      [null, 'timeout'],
      [200, undefined],
    ]);
  });
});

describe('JWKS', () => {
  it('counts requests of the KYB JWKS', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    await fetch(service.jwksUrl);
    await fetch(service.jwksUrl);
    expect(service.jwksRequests).toBe(2);
  });

  it('serves the JWKS without an API key', async () => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const response = await fetch(service.jwksUrl);
    expect([
      response.status,
      ((await response.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid),
    ]).toEqual([200, [service.kid]]);
  });
});
