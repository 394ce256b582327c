// The client's API calls on the `kyb-webhooks:client:request` tracing channel, as a subscriber (an APM) sees them:
// one trace per attempt, with the route template and the outcome, never the key.
import { TRACING_CHANNELS, type ClientRequestTrace } from '@kyb-webhooks/core';
import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routeOf, shownUrl } from './http.js';
import { createKybClient } from './index.js';

// As the core finds it (packages/core/test-channels.ts, which a package other than the core may not import).
interface TracingChannelLike {
  subscribe(handlers: Record<string, (message: unknown) => void>): void;
  unsubscribe(handlers: Record<string, (message: unknown) => void>): void;
}
const diagnostics = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('diagnostics_channel') as
  { tracingChannel(name: string): TracingChannelLike } | undefined;

let service: KybService;
beforeAll(async () => {
  service = await startKybService();
});
afterAll(async () => {
  await service.stop();
});

let unsubscribe: (() => void) | undefined;
afterEach(() => unsubscribe?.());

function record(): [string, ClientRequestTrace][] {
  const seen: [string, ClientRequestTrace][] = [];
  const channel = diagnostics!.tracingChannel(TRACING_CHANNELS.clientRequest);
  const handlers = Object.fromEntries(
    ['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((phase) => [
      phase,
      (message: unknown) => void seen.push([phase, { ...(message as ClientRequestTrace) }]),
    ]),
  );
  channel.subscribe(handlers);
  unsubscribe = () => channel.unsubscribe(handlers);
  return seen;
}

describe.runIf(diagnostics)('the client request channel', () => {
  it('publishes each attempt with its route template and status; a retry is another trace', async () => {
    const id = await service.createDataRequest();
    const client = createKybClient({
      baseUrl: service.baseUrl,
      apiKey: service.apiKey,
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    const seen = record();
    service.failNextApiCalls(1, { status: 503 });
    await client.redeliver(id, { retry: true });
    const ended = seen.filter(([phase]) => phase === 'asyncEnd').map(([, trace]) => trace);
    const route = '/api/v1/kyb/data-requests/{id}/redeliver';
    const url = `${service.baseUrl}/api/v1/kyb/data-requests/${id}/redeliver`;
    expect(ended).toEqual([
      { method: 'POST', route, url, origin: service.baseUrl, attempt: 1, status: 503 },
      { method: 'POST', route, url, origin: service.baseUrl, attempt: 2, status: 202 },
    ]);
    expect(JSON.stringify(seen)).not.toContain(service.apiKey);
  });

  it('publishes a failure with no answer on error', async () => {
    const client = createKybClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'kyb_test_key',
      retry: { maxRetries: 0 },
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    });
    const seen = record();
    await expect(client.reactivate()).rejects.toMatchObject({ code: 'network_error' });
    expect(seen.map(([phase]) => phase)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(seen.at(-1)![1]).toMatchObject({ method: 'POST', route: '/api/v1/kyb/webhook-endpoint/reactivate' });
    expect((seen.at(-1)![1].error as Error).message).toBe('fetch failed');
  });
});

describe('shownUrl', () => {
  it('shows a URL whole but for its query values, each REDACTED', () => {
    const base = 'https://api.kyb.example.com/api/v1/kyb/data-requests/dr_01J9ZK/events';
    expect(shownUrl(new URL(base))).toBe(base);
    expect(shownUrl(new URL(`${base}?after_seq=3&limit=50`))).toBe(`${base}?after_seq=REDACTED&limit=REDACTED`);
    const filtered = shownUrl(new URL(`${base}?email=jane%40example.com&cursor=c2VjcmV0&a%20b=1&flag`));
    expect(filtered).toBe(`${base}?email=REDACTED&cursor=REDACTED&a%20b=REDACTED&flag=REDACTED`);
  });
});

describe('routeOf', () => {
  it('replaces the id-like segments of a path, keeping the version', () => {
    expect(routeOf('/api/v1/kyb/data-requests/dr_01J9ZK/events')).toBe('/api/v1/kyb/data-requests/{id}/events');
    expect(routeOf('/api/v1/kyb/webhook-endpoint/reactivate')).toBe('/api/v1/kyb/webhook-endpoint/reactivate');
    expect(routeOf('/api/v2/things/42')).toBe('/api/v2/things/{id}');
  });
});
