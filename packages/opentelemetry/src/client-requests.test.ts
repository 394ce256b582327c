// The client's calls to the KYB API as the layer records them, with the real SDK, against the local service on
// 127.0.0.1: one HTTP CLIENT span per attempt named by the route template, retries counted, the duration metric of
// the HTTP conventions, and never the API key, a query or a request id in a metric.
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { createKybClient } from '@kyb-webhooks/client';
import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { METRICS, openTelemetry } from './index.js';
import { asyncContextManager, histogramOf, sdkRig, type SdkRig } from './test-helpers.js';

let service: KybService;
let rig: SdkRig;

beforeAll(async () => {
  context.setGlobalContextManager(asyncContextManager());
  service = await startKybService();
  rig = sdkRig();
});
afterEach(() => rig.reset());
afterAll(async () => {
  await service.stop();
  await rig.shutdown();
  context.disable();
});

function client() {
  return createKybClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    attestation: { issuer: service.issuer, audience: service.audience },
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
  });
}

const ROUTE = '/api/v1/kyb/data-requests/{id}/deliveries';

describe('the client with the OpenTelemetry layer', () => {
  it('makes one CLIENT span per attempt, named by method and route template, a retried 503 an error', async () => {
    const id = await service.createDataRequest();
    const port = Number(new URL(service.baseUrl).port);
    service.failNextApiCalls(1, { status: 503 });
    await client().deliveries(id);
    const spans = rig.spans();
    expect(spans.map((span) => span.name)).toEqual([`GET ${ROUTE}`, `GET ${ROUTE}`]);
    expect(spans.every((span) => span.kind === SpanKind.CLIENT)).toBe(true);
    const url = `${service.baseUrl}/api/v1/kyb/data-requests/${id}/deliveries`;
    expect(spans[0]!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': ROUTE,
      'url.full': url,
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(spans[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[1]!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': ROUTE,
      'url.full': url,
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.request.resend_count': 1,
      'http.response.status_code': 200,
    });
    expect(spans[1]!.status.code).toBe(SpanStatusCode.UNSET);
    const durations = histogramOf(await rig.metrics(), METRICS.clientRequestDuration);
    expect(durations.map((point) => [point.attributes['http.response.status_code'], point.count])).toEqual(
      expect.arrayContaining([
        [503, 1],
        [200, 1],
      ]),
    );
    // Metrics carry the template, never the id.
    expect(JSON.stringify(durations)).not.toContain(id);
  });

  it('records no key, query or body, and the release pull’s JWKS fetch as its own span', async () => {
    const id = await service.createDataRequest();
    await service.release(id);
    const result = await client().release(id);
    expect(result.status).toBe('released');
    const names = rig.spans().map((span) => span.name);
    expect(names).toContain('GET /api/v1/kyb/data-requests/{id}/release');
    expect(names).toContain('GET /.well-known/kyb-jwks.json');
    const exported = JSON.stringify(rig.spans().map((span) => [span.name, span.attributes, span.events]));
    expect(exported).not.toContain(service.apiKey);
    expect(exported).not.toContain(result.status === 'released' ? result.token.slice(0, 40) : 'never');
  });

  it("records a call's URL with its ids, each query value REDACTED", async () => {
    const id = await service.createDataRequest();
    const path = `/api/v1/kyb/data-requests/${id}/events`;
    const email = 'jane.doe@example.com';
    await client().request('GET', path, { query: { after_seq: 0, note: email } });
    const span = rig.spans().find((each) => each.name === `GET /api/v1/kyb/data-requests/{id}/events`)!;
    expect(span.attributes['url.full']).toBe(`${service.baseUrl}${path}?after_seq=REDACTED&note=REDACTED`);
    expect(JSON.stringify(rig.spans().map((each) => each.attributes))).not.toContain(encodeURIComponent(email));
    expect(JSON.stringify(await rig.metrics())).not.toContain(id);
  });
});
