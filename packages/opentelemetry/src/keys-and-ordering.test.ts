// The layer around what a delivery may do besides its own checks, as a user sees it with the real SDK: the JWKS
// fetch of an attested receiver (a CLIENT span, the fetches counter), and under ordering `enforce` the backfill of a
// gap (an INTERNAL span around the events it runs, the backfilled and gaps counters).
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { createMemoryStore, createReceiver, streamOrdering, type FetchEventsAfter } from '@kyb-webhooks/core';
import { createTestSigner, startJwksServer, testStream, type TestSigner } from '@kyb-webhooks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { METRICS, openTelemetry } from './index.js';
import { asyncContextManager, counterOf, sdkRig, shapeOf, spanTrees, type SdkRig } from './test-helpers.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'otel-keys-secret';
const PENDING = 'kyb.data_request.pending_approval';
const RELEASED = 'kyb.data_request.released';

let signer: TestSigner;
let rig: SdkRig;

beforeAll(async () => {
  context.setGlobalContextManager(asyncContextManager());
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
  rig = sdkRig();
});
afterEach(() => rig.reset());
afterAll(async () => {
  await rig.shutdown();
  context.disable();
});

const telemetry = () => openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider });
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the JWKS fetch of an attested receiver', () => {
  it('is a CLIENT span under the delivery, with the URL, status and key count, and counted ok', async () => {
    const server = await startJwksServer(signer.jwks);
    try {
      const receiver = createReceiver({
        secrets: { '1': SECRET },
        now: () => NOW,
        logger: false,
        attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: `${server.url}?token=abc` },
        telemetry: telemetry(),
      });
      receiver.onAny(async function save() {});
      const [released] = testStream([RELEASED]);
      const { headers, body } = await signer.sign(await signer.withAttestation(released!));
      expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
      await settle();
      const [delivery] = spanTrees(rig.spans());
      const url = new URL(server.url);
      expect(shapeOf(delivery!)).toEqual({
        [`process ${RELEASED}`]: [`GET ${url.pathname}`, 'claim', 'handler save', 'complete'],
      });
      const jwks = delivery!.children[0]!;
      expect(jwks.kind).toBe(SpanKind.CLIENT);
      // Shown without its query: whatever was put there (a token) is not recorded.
      expect(jwks.attributes).toEqual({
        'http.request.method': 'GET',
        'url.full': server.url,
        'url.template': url.pathname,
        'server.address': '127.0.0.1',
        'server.port': Number(url.port),
        'http.response.status_code': 200,
        'kyb.webhook.jwks.keys': signer.jwks.keys.length,
      });
      expect(counterOf(await rig.metrics(), METRICS.jwksFetches)).toEqual([
        { attributes: { 'kyb.webhook.jwks.outcome': 'ok' }, value: 1 },
      ]);
    } finally {
      await server.close();
    }
  });

  it('that fails: the span in error with the status as error.type, the delivery 503 jwks_unavailable', async () => {
    const server = await startJwksServer(signer.jwks);
    server.setStatus(404);
    try {
      const receiver = createReceiver({
        secrets: { '1': SECRET },
        now: () => NOW,
        logger: false,
        attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: server.url },
        telemetry: telemetry(),
      });
      const [released] = testStream([RELEASED]);
      const { headers, body } = await signer.sign(await signer.withAttestation(released!));
      const result = await receiver.receive({ method: 'POST', headers, body });
      expect({ status: result.status, code: result.code }).toEqual({ status: 503, code: 'jwks_unavailable' });
      await settle();
      const jwks = rig.spans().find((span) => span.name === `GET ${new URL(server.url).pathname}`)!;
      expect(jwks.status.code).toBe(SpanStatusCode.ERROR);
      expect(jwks.attributes).toMatchObject({ 'http.response.status_code': 404, 'error.type': '404' });
      expect(jwks.events.map((event) => event.attributes)).toEqual([{ 'exception.type': '404' }]);
      expect(counterOf(await rig.metrics(), METRICS.jwksFetches)).toContainEqual({
        attributes: { 'kyb.webhook.jwks.outcome': 'error', 'error.type': '404' },
        value: 1,
      });
    } finally {
      await server.close();
    }
  });
});

describe('ordering enforce, a gap', () => {
  it('is backfilled under a span of its own, around the events it runs; the gap and the events are counted', async () => {
    const events = testStream([PENDING, PENDING, PENDING, PENDING]);
    const fetchEventsAfter: FetchEventsAfter = async function* (streamId, afterSeq) {
      for (const event of events)
        if (event.stream_id === streamId && event.seq > afterSeq) yield structuredClone(event);
    };
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter }),
      telemetry: telemetry(),
    });
    const ran: number[] = [];
    receiver.onAny(async function save(event) {
      ran.push(event.seq);
    });
    const deliver = async (index: number) => {
      const { headers, body } = await signer.sign(events[index]!);
      return receiver.receive({ method: 'POST', headers, body });
    };
    expect((await deliver(0)).status).toBe(200);
    rig.reset();
    // seq 1 and 2 never arrived: the delivery of seq 3 backfills them first.
    expect((await deliver(3)).status).toBe(200);
    await settle();
    expect(ran).toEqual([0, 1, 2, 3]);
    const [delivery] = spanTrees(rig.spans());
    const names = (node: { name: string; children: { name: string }[] }) => node.children.map((child) => child.name);
    const backfill = delivery!.children.find((child) => child.name === 'backfill')!;
    expect(backfill.kind).toBe(SpanKind.INTERNAL);
    expect(backfill.attributes).toEqual({
      'cloudevents.event_subject': events[0]!.stream_id,
      'cloudevents.event_type': PENDING,
      'kyb.webhook.seq': 3,
      'kyb.webhook.backfill.from_seq': 1,
      'kyb.webhook.backfill.filled': 2,
    });
    expect(backfill.status.code).toBe(SpanStatusCode.UNSET);
    // The handlers of the backfilled events run inside it; the delivery's own after it.
    expect(names(backfill).filter((name) => name.startsWith('handler'))).toEqual(['handler save', 'handler save']);
    expect(names(delivery!).filter((name) => name.startsWith('handler'))).toEqual(['handler save']);
    const collected = await rig.metrics();
    expect(counterOf(collected, METRICS.gaps)).toEqual([
      { attributes: { 'kyb.webhook.gap.kind': 'gap', 'kyb.webhook.ordering.mode': 'enforce' }, value: 1 },
    ]);
    expect(counterOf(collected, METRICS.backfilledEvents)).toEqual([
      { attributes: { 'cloudevents.event_type': PENDING }, value: 2 },
    ]);
  });

  it('that the API cannot fill: the backfill span in error with the code the delivery got', async () => {
    const events = testStream([PENDING, PENDING, PENDING]);
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter: async function* () {} }),
      telemetry: telemetry(),
    });
    const deliver = async (index: number) => {
      const { headers, body } = await signer.sign(events[index]!);
      return receiver.receive({ method: 'POST', headers, body });
    };
    await deliver(0);
    rig.reset();
    const backfilledBefore = counterOf(await rig.metrics(), METRICS.backfilledEvents);
    const result = await deliver(2);
    expect({ status: result.status, code: result.code }).toEqual({ status: 409, code: 'out_of_order' });
    await settle();
    const backfill = rig.spans().find((span) => span.name === 'backfill')!;
    expect(backfill.status.code).toBe(SpanStatusCode.ERROR);
    expect(backfill.attributes).toMatchObject({ 'kyb.webhook.backfill.filled': 0, 'kyb.webhook.code': 'out_of_order' });
    // Nothing more counted as backfilled (the counter is cumulative over this file's deliveries).
    expect(counterOf(await rig.metrics(), METRICS.backfilledEvents)).toEqual(backfilledBefore);
  });
});

describe('ordering detect', () => {
  it('counts a gap and a late event by kind, with no id, and the deliveries still answer 200', async () => {
    const events = testStream([PENDING, PENDING, PENDING]);
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      ordering: streamOrdering({ mode: 'detect' }),
      telemetry: telemetry(),
    });
    receiver.onAny(() => {});
    const before = counterOf(await rig.metrics(), METRICS.gaps);
    for (const index of [0, 2, 1]) {
      const { headers, body } = await signer.sign(events[index]!);
      expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    }
    const after = counterOf(await rig.metrics(), METRICS.gaps);
    const valueOf = (points: typeof after, kind: string) =>
      points.find(
        (point) =>
          point.attributes['kyb.webhook.gap.kind'] === kind &&
          point.attributes['kyb.webhook.ordering.mode'] === 'detect',
      )?.value ?? 0;
    expect(valueOf(after, 'gap') - valueOf(before, 'gap')).toBe(1);
    expect(valueOf(after, 'late') - valueOf(before, 'late')).toBe(1);
    expect(after.every((point) => Object.keys(point.attributes).length === 2)).toBe(true);
  });
});
