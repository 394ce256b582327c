import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testEvents, testStream } from './fixtures.js';
import { createTestSender } from './sender.js';
import { createTestSigner, type TestSigner } from './signer.js';

interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  envelope: { event_id: string; stream_id: string; seq: number; attestation?: string };
  attempt: number;
  receivedAt: number;
}

type Handler = (request: ReceivedRequest, response: ServerResponse) => void;

/** A merchant endpoint on 127.0.0.1 that records what arrived and answers through `handler`. */
async function startEndpoint(handler: Handler) {
  const received: ReceivedRequest[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      let envelope: ReceivedRequest['envelope'] = { event_id: '', stream_id: '', seq: -1 };
      try {
        envelope = JSON.parse(body.toString('utf8'));
      } catch {
        // Bodies that are not JSON are recorded as they are.
      }
      const entry: ReceivedRequest = {
        method: request.method ?? '',
        headers: request.headers,
        body,
        envelope,
        attempt: Number(request.headers['service-delivery-attempt']),
        receivedAt: performance.now(),
      };
      received.push(entry);
      handler(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url, received, close };
}

function answer(
  response: ServerResponse,
  status: number,
  payload: unknown = { ok: status < 300 },
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(payload));
}

function macMatches(request: ReceivedRequest, secret: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64}),kv=(.+)$/.exec(String(request.headers['service-kyb-signature']));
  if (!match) return false;
  return createHmac('sha256', secret).update(`${match[1]}.`).update(request.body).digest('hex') === match[2];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((close) => close()));
});

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '4': 'whsec_endpoint' } });
});

describe('createTestSender: retries', () => {
  it('retries a failing endpoint on a growing schedule until it answers 2xx', async () => {
    const endpoint = await startEndpoint((request, response) => {
      if (request.attempt <= 2) answer(response, 500, { error: { code: 'handler_failed', message: 'x' } });
      else answer(response, 200);
    });
    // Factor 3 keeps the two waits far enough apart that a loaded machine cannot blur which one is longer.
    const sender = createTestSender({ url: endpoint.url, signer, retry: { baseDelayMs: 100, factor: 3 } });
    const envelope = testEvents.dataRequestReleased();
    const record = await sender.send(envelope);

    expect(record).toMatchObject({ eventId: envelope.event_id, delivered: true });
    expect(record.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.code])).toEqual([
      [1, 500, 'handler_failed'],
      [2, 500, 'handler_failed'],
      [3, 200, undefined],
    ]);
    expect(sender.attempts).toEqual(record.attempts);
    expect(endpoint.received).toHaveLength(3);
    expect(endpoint.received.map((request) => request.headers['service-delivery-attempt'])).toEqual(['1', '2', '3']);
    for (const request of endpoint.received) {
      expect(request.method).toBe('POST');
      expect(request.headers['user-agent']).toBe('service-kyb-webhooks/1');
      expect(request.headers['service-event-id']).toBe(envelope.event_id);
      expect(request.envelope.event_id).toBe(envelope.event_id);
      expect(macMatches(request, 'whsec_endpoint')).toBe(true);
    }
    // One attestation per event, the same on every retry.
    expect(new Set(endpoint.received.map((request) => request.envelope.attestation)).size).toBe(1);
    expect(endpoint.received[0]?.envelope.attestation).toEqual(expect.any(String));

    const [first, second, third] = endpoint.received.map((request) => request.receivedAt) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(95);
    expect(third - second).toBeGreaterThanOrEqual(295);
    expect(third - second).toBeGreaterThan(second - first);
    expect([sender.delayBefore(2), sender.delayBefore(3), sender.delayBefore(4)]).toEqual([100, 300, 900]);
  });

  it('re-signs every attempt with a fresh t', async () => {
    let now = Date.parse('2026-06-01T00:00:00Z');
    const clocked = await createTestSigner({ now: () => (now += 7_000) });
    const endpoint = await startEndpoint((request, response) =>
      answer(response, request.attempt < 3 ? 503 : 204, null),
    );
    await createTestSender({ url: endpoint.url, signer: clocked, retry: { baseDelayMs: 1 } }).send(
      testEvents.dataRequestRefused(),
    );
    const stamps = endpoint.received.map(
      (request) => /t=(\d+)/.exec(String(request.headers['service-kyb-signature']))?.[1],
    );
    expect(new Set(stamps).size).toBe(3);
  });

  it('gives up after maxAttempts and reports it not delivered', async () => {
    const endpoint = await startEndpoint((_request, response) => answer(response, 401, { code: 'signature_mismatch' }));
    const sender = createTestSender({ url: endpoint.url, signer, retry: { maxAttempts: 3, baseDelayMs: 5 } });
    const record = await sender.send(testEvents.dataRequestRefused());
    expect(record.delivered).toBe(false);
    expect(record.attempts.map((attempt) => attempt.code)).toEqual([
      'signature_mismatch',
      'signature_mismatch',
      'signature_mismatch',
    ]);
    expect(endpoint.received).toHaveLength(3);
  });

  it('caps the wait at maxDelayMs', () => {
    const sender = createTestSender({
      url: 'http://127.0.0.1:1/',
      signer,
      retry: { baseDelayMs: 100, factor: 10, maxDelayMs: 500 },
    });
    expect([2, 3, 4, 9].map((attempt) => sender.delayBefore(attempt))).toEqual([100, 500, 500, 500]);
  });
});

describe('createTestSender: redirects, timeouts, network errors', () => {
  it('never follows a redirect and counts it as a failure', async () => {
    const target = await startEndpoint((_request, response) => answer(response, 200));
    const endpoint = await startEndpoint((_request, response) => answer(response, 302, {}, { location: target.url }));
    const sender = createTestSender({ url: endpoint.url, signer, retry: { maxAttempts: 2, baseDelayMs: 5 } });
    const record = await sender.send(testEvents.dataRequestRefused());
    expect(record.delivered).toBe(false);
    expect(record.attempts.map((attempt) => attempt.status)).toEqual([302, 302]);
    expect(record.attempts[0]?.headers.location).toBe(target.url);
    expect(target.received).toHaveLength(0);
  });

  it('times out a hanging endpoint and retries it', async () => {
    const endpoint = await startEndpoint(() => {
      // Never answers.
    });
    const sender = createTestSender({
      url: endpoint.url,
      signer,
      timeoutMs: 150,
      retry: { maxAttempts: 2, baseDelayMs: 5 },
    });
    const started = performance.now();
    const record = await sender.send(testEvents.dataRequestRefused());
    expect(record.delivered).toBe(false);
    expect(record.attempts.map((attempt) => [attempt.status, attempt.error])).toEqual([
      [null, 'timeout'],
      [null, 'timeout'],
    ]);
    for (const attempt of record.attempts) {
      expect(attempt.durationMs).toBeGreaterThanOrEqual(140);
      expect(attempt.durationMs).toBeLessThan(1500);
    }
    expect(performance.now() - started).toBeLessThan(3000);
    expect(endpoint.received).toHaveLength(2);
  });

  it('records a refused connection as a network error without details', async () => {
    const endpoint = await startEndpoint((_request, response) => answer(response, 200));
    await endpoint.close();
    const sender = createTestSender({ url: endpoint.url, signer, retry: { maxAttempts: 2, baseDelayMs: 5 } });
    const record = await sender.send(testEvents.dataRequestRefused());
    expect(record.delivered).toBe(false);
    expect(record.attempts.map((attempt) => attempt.error)).toEqual([
      'network error (ECONNREFUSED)',
      'network error (ECONNREFUSED)',
    ]);
  });
});

describe('createTestSender: stream order', () => {
  it('does not attempt seq 1 before seq 0 succeeded, while other streams go ahead', async () => {
    const stream = testStream(3);
    const other = testStream(1);
    const successAt = new Map<number, number>();
    const endpoint = await startEndpoint((request, response) => {
      const isSlowStream = request.envelope.stream_id === stream[0]?.stream_id;
      if (isSlowStream && request.envelope.seq === 0 && request.attempt <= 2) return answer(response, 500);
      if (isSlowStream) successAt.set(request.envelope.seq, performance.now());
      answer(response, 200);
    });
    const sender = createTestSender({ url: endpoint.url, signer, retry: { baseDelayMs: 40 } });
    // Shuffled on purpose: sendAll orders each stream by seq itself.
    const records = await sender.sendAll([stream[2]!, other[0]!, stream[1]!, stream[0]!]);

    expect(records.map((record) => record.eventId)).toEqual(
      [stream[2], other[0], stream[1], stream[0]].map((e) => e!.event_id),
    );
    expect(records.every((record) => record.delivered)).toBe(true);
    const slow = endpoint.received.filter((request) => request.envelope.stream_id === stream[0]?.stream_id);
    expect(slow.map((request) => [request.envelope.seq, request.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 1],
      [2, 1],
    ]);
    const firstSeq1 = slow.find((request) => request.envelope.seq === 1)!;
    expect(firstSeq1.receivedAt).toBeGreaterThanOrEqual(successAt.get(0)!);
    // The other stream was not held up by the failing one.
    const otherRequest = endpoint.received.find((request) => request.envelope.stream_id === other[0]?.stream_id)!;
    expect(otherRequest.receivedAt).toBeLessThan(successAt.get(0)!);
  });

  it('moves on to seq N+1 once seq N exhausted its retries', async () => {
    const stream = testStream(2);
    const endpoint = await startEndpoint((request, response) =>
      answer(response, request.envelope.seq === 0 ? 500 : 200),
    );
    const sender = createTestSender({ url: endpoint.url, signer, retry: { maxAttempts: 3, baseDelayMs: 5 } });
    const [first, second] = await Promise.all([sender.send(stream[0]!), sender.send(stream[1]!)]);
    expect(first?.delivered).toBe(false);
    expect(second?.delivered).toBe(true);
    expect(endpoint.received.map((request) => request.envelope.seq)).toEqual([0, 0, 0, 1]);
  });
});

describe('createTestSender: deliverOnce', () => {
  it('makes one raw attempt with signer options and header or body changes', async () => {
    const endpoint = await startEndpoint((request, response) =>
      macMatches(request, 'whsec_endpoint')
        ? answer(response, 200)
        : answer(response, 401, { error: { code: 'signature_mismatch' } }),
    );
    const sender = createTestSender({ url: endpoint.url, signer });
    const envelope = testEvents.dataRequestRefused();

    expect(await sender.deliverOnce(envelope)).toMatchObject({ status: 200, attempt: 1 });
    expect(await sender.deliverOnce(envelope, { secret: 'whsec_forged' })).toMatchObject({
      status: 401,
      code: 'signature_mismatch',
    });
    expect(await sender.deliverOnce(envelope, { body: JSON.stringify({ ...envelope, seq: 9 }) })).toMatchObject({
      status: 401,
    });

    await sender.deliverOnce(envelope, {
      attempt: 4,
      headers: { 'Service-KYB-Signature': undefined, 'X-Extra': 'yes' },
    });
    const last = endpoint.received.at(-1)!;
    expect(last.headers).not.toHaveProperty('service-kyb-signature');
    expect(last.headers['x-extra']).toBe('yes');
    expect(last.attempt).toBe(4);

    // Raw attempts are not part of the retry history.
    expect(sender.attempts).toHaveLength(0);
  });
});
