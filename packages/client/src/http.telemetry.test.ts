import type { ClientRequestTrace, ReceiverTelemetry } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { createKybClient, type KybClientOptions } from './index.js';

// What the client's `telemetry` option (an observability layer) sees of each attempt: the route template it names
// the span after, the status, and the error of an attempt whose answer could not be taken. The `fetch` option hands
// back real Responses.
const BASE = 'http://127.0.0.1:9';

function client(answer: () => Response, overrides: Partial<KybClientOptions> = {}) {
  const traces: ClientRequestTrace[] = [];
  const telemetry: ReceiverTelemetry = {
    around(operation, trace, run) {
      if (operation === 'request') traces.push(trace as ClientRequestTrace);
      return run();
    },
  };
  const kyb = createKybClient({
    baseUrl: BASE,
    apiKey: 'kyb_test_key_1',
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async () => answer(),
    telemetry,
    ...overrides,
  });
  return { kyb, traces };
}

describe('the request operation', () => {
  it('names a call by its path, each segment with a digit in it as {id}, except a version', async () => {
    const { kyb, traces } = client(() => new Response(null, { status: 204 }));
    for (const path of [
      '/api/v1/kyb/things/dev2',
      '/api/v1/kyb/things/v1beta',
      '/api/v12/kyb/things/abc',
      '/api/v1/kyb/things/42/v2',
    ])
      await kyb.request('GET', path);
    expect(traces.map((trace) => trace.route)).toEqual([
      '/api/v1/kyb/things/{id}',
      '/api/v1/kyb/things/{id}',
      '/api/v12/kyb/things/abc',
      '/api/v1/kyb/things/{id}/v2',
    ]);
    expect(traces[0]).toMatchObject({ method: 'GET', origin: BASE, attempt: 1, status: 204 });
  });

  it('names as {id} an id without digits: a prefixed one, or any segment after a collection of the API', async () => {
    const { kyb, traces } = client(() => new Response(null, { status: 204 }));
    for (const path of [
      '/api/v1/kyb/data-requests/dr_KqZpWxAbCdEf/deliveries',
      '/api/v1/kyb/signature-requests/abcdefghij/release',
      '/api/v1/kyb/things/sr_abcdefghij',
      '/api/v1/kyb/webhook-endpoint/reactivate',
    ])
      await kyb.request('GET', path);
    expect(traces.map((trace) => trace.route)).toEqual([
      '/api/v1/kyb/data-requests/{id}/deliveries',
      '/api/v1/kyb/signature-requests/{id}/release',
      '/api/v1/kyb/things/{id}',
      '/api/v1/kyb/webhook-endpoint/reactivate',
    ]);
  });

  it('a 2xx over maxResponseBytes is the attempt error response_too_large, beside its status', async () => {
    const { kyb, traces } = client(() => new Response('{"things":[1,2,3]}', { status: 200 }), {
      maxResponseBytes: 8,
    });
    await expect(kyb.request('GET', '/api/v1/kyb/things')).rejects.toMatchObject({ code: 'response_too_large' });
    expect(traces).toHaveLength(1);
    expect(traces[0]).toMatchObject({ status: 200, error: { code: 'response_too_large' } });
  });

  it('an answer taken has no error', async () => {
    const { kyb, traces } = client(() => new Response('{"things":[]}', { status: 200 }));
    await kyb.request('GET', '/api/v1/kyb/things');
    expect(traces[0]!.status).toBe(200);
    expect(traces[0]!.error).toBeUndefined();
  });
});

describe('a telemetry layer that throws', () => {
  it.each<[string, ReceiverTelemetry]>([
    [
      'in enabled()',
      {
        enabled() {
          throw new Error('layer broke');
        },
        around: (_operation, _trace, run) => run(),
      },
    ],
    [
      'in around()',
      {
        around() {
          throw new Error('layer broke');
        },
      },
    ],
  ])('%s: the call is made once and answers as without it', async (_where, telemetry) => {
    let fetches = 0;
    const kyb = createKybClient({
      baseUrl: BASE,
      apiKey: 'kyb_test_key_1',
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async () => {
        fetches++;
        return new Response('{"reactivated":true}', { status: 200, headers: { 'content-type': 'application/json' } });
      },
      telemetry,
    });
    await expect(kyb.reactivate()).resolves.toBeDefined();
    expect(fetches).toBe(1);
  });
});
