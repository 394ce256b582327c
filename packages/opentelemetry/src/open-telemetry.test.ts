// openTelemetry() as a user sees it, with the real OpenTelemetry SDK (in-memory span exporter, an on-demand metric
// reader, the async-hooks context manager): the span tree of each kind of delivery, its names, kinds, attributes and
// status, the metric values, and that nothing secret or personal reaches an exported span or metric.
import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import {
  createMemoryStore,
  createReceiver,
  type DedupeStore,
  type ReceiverTelemetry,
  type Receiver,
} from '@kyb-webhooks/core';
import {
  createTestSigner,
  defaultReleasedAnswers,
  TEST_SUBJECTS,
  testStream,
  type SignedDelivery,
  type TestSigner,
} from '@kyb-webhooks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { ATTRIBUTES as A, METRICS, openTelemetry, UNAUTHENTICATED_SPAN_NAME } from './index.js';
import { errorTypeOf } from './open-telemetry.js';
import {
  asyncContextManager,
  counterOf,
  histogramOf,
  sdkRig,
  shapeOf,
  spanTrees,
  type SdkRig,
  type SpanNode,
} from './test-helpers.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'otel-test-secret-do-not-export';
const PENDING = 'kyb.data_request.pending_approval';
const RELEASED = 'kyb.data_request.released';

let signer: TestSigner;
let rig: SdkRig;
const contextManager = asyncContextManager();

beforeAll(async () => {
  context.setGlobalContextManager(contextManager);
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
  rig = sdkRig();
});
afterEach(() => rig.reset());
afterAll(async () => {
  await rig.shutdown();
  context.disable();
});

/** A receiver with the layer on the rig's providers (or the options given), the memory store unless another. */
function receiverWith(options: { store?: DedupeStore; telemetry?: ReceiverTelemetry; attested?: boolean } = {}) {
  return createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    logger: false,
    store: options.store ?? createMemoryStore({ now: () => NOW }),
    telemetry:
      options.telemetry ?? openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    ...(options.attested
      ? { attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks } }
      : {}),
  });
}

async function deliver(receiver: Receiver, delivery: SignedDelivery) {
  const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
  // The layer ends a span in a reaction to run's promise, registered before the caller's await resumes: one more
  // turn makes sure every reaction ran before the test reads the exporter.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return result;
}

/** The one delivery span of the rig's finished spans. */
function deliveryTree(): SpanNode {
  const roots = spanTrees(rig.spans());
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

const child = (node: SpanNode, name: string) => node.children.find((c) => c.name === name)!;

describe('a delivery processed', () => {
  it('is one CONSUMER span, process <event type>, with the store calls and the handler run as its children', async () => {
    const receiver = receiverWith();
    receiver.onAny(async function audit() {
      await Promise.resolve();
    });
    const [event] = testStream([PENDING]);
    const delivery = await signer.sign(event!, { attempt: 2 });
    expect((await deliver(receiver, delivery)).status).toBe(200);

    const root = deliveryTree();
    expect(shapeOf(root)).toEqual({ [`process ${PENDING}`]: ['claim', 'handler audit', 'complete'] });
    expect(root.kind).toBe(SpanKind.CONSUMER);
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes).toEqual({
      'messaging.system': 'kyb_webhooks',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.message.id': event!.event_id,
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'cloudevents.event_id': event!.event_id,
      'cloudevents.event_type': PENDING,
      'cloudevents.event_subject': event!.stream_id,
      'kyb.webhook.delivery_attempt': 2,
      'kyb.webhook.seq': event!.seq,
      'kyb.webhook.api_version': event!.api_version,
      'kyb.webhook.outcome': 'accepted',
    });
    expect(root.events).toEqual([]);

    const handler = child(root, 'handler audit');
    expect(handler.kind).toBe(SpanKind.INTERNAL);
    expect(handler.status.code).toBe(SpanStatusCode.UNSET);
    expect(handler.attributes).toEqual({
      'kyb.webhook.handler': 'audit',
      'cloudevents.event_type': PENDING,
      'cloudevents.event_id': event!.event_id,
    });
    for (const name of ['claim', 'complete']) {
      const store = child(root, name);
      expect(store.kind).toBe(SpanKind.INTERNAL);
      expect(store.attributes).toEqual({ 'kyb.webhook.store.operation': name });
      expect(store.status.code).toBe(SpanStatusCode.UNSET);
    }
  });

  it('is traced and measured by a tracer and a meter named after the package, with its version', async () => {
    const receiver = receiverWith();
    const [event] = testStream([PENDING]);
    await deliver(receiver, await signer.sign(event!));
    const scopes = new Set(
      rig.spans().map((span) => `${span.instrumentationScope.name}@${span.instrumentationScope.version}`),
    );
    expect([...scopes]).toEqual([`@kyb-webhooks/opentelemetry@${packageJson.version}`]);
    expect(await rig.scopes()).toEqual([{ name: '@kyb-webhooks/opentelemetry', version: packageJson.version }]);
  });

  it('counts it, times it, and measures its attempt number and each store call, with no id as an attribute', async () => {
    const meterRig = sdkRig();
    const receiver = receiverWith({
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider }),
    });
    receiver.onAny(async function audit() {});
    const [first, second] = testStream([PENDING, PENDING]);
    await deliver(receiver, await signer.sign(first!, { attempt: 1 }));
    await deliver(receiver, await signer.sign(second!, { attempt: 4 }));
    const collected = await meterRig.metrics();
    const accepted = {
      'kyb.webhook.outcome': 'accepted',
      'http.response.status_code': 200,
      'cloudevents.event_type': PENDING,
    };
    expect(counterOf(collected, METRICS.deliveries)).toEqual([{ attributes: accepted, value: 2 }]);
    expect(histogramOf(collected, METRICS.processDuration)).toEqual([
      { attributes: accepted, count: 2, sum: expect.any(Number) },
    ]);
    expect(histogramOf(collected, METRICS.deliveryAttempt)).toEqual([{ attributes: accepted, count: 2, sum: 5 }]);
    // Lag from the verified signature timestamp to the answer, against the real clock (never negative).
    const [lag] = histogramOf(collected, METRICS.deliveryLag);
    expect(lag).toMatchObject({ attributes: accepted, count: 2 });
    expect(lag!.sum).toBeGreaterThanOrEqual(0);
    expect(histogramOf(collected, METRICS.storeDuration)).toEqual([
      {
        attributes: { 'kyb.webhook.store.operation': 'claim', 'kyb.webhook.store.outcome': 'ok' },
        count: 2,
        sum: expect.any(Number),
      },
      {
        attributes: { 'kyb.webhook.store.operation': 'complete', 'kyb.webhook.store.outcome': 'ok' },
        count: 2,
        sum: expect.any(Number),
      },
    ]);
    const units = Object.fromEntries(collected.map((metric) => [metric.descriptor.name, metric.descriptor.unit]));
    expect(units).toEqual({
      [METRICS.deliveries]: '{delivery}',
      [METRICS.processDuration]: 's',
      [METRICS.deliveryAttempt]: '{attempt}',
      [METRICS.deliveryLag]: 's',
      [METRICS.storeDuration]: 's',
    });
    await meterRig.shutdown();
  });
});

describe('a duplicate', () => {
  it('is accepted with the code duplicate: the claim finds it done, no handler runs', async () => {
    const meterRig = sdkRig();
    const receiver = receiverWith({
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider }),
    });
    let runs = 0;
    receiver.onAny(function audit() {
      runs++;
    });
    const [event] = testStream([PENDING]);
    const delivery = await signer.sign(event!);
    await deliver(receiver, delivery);
    rig.reset();
    const again = await deliver(receiver, delivery);
    expect({ status: again.status, code: again.code, runs }).toEqual({ status: 200, code: 'duplicate', runs: 1 });

    const root = deliveryTree();
    expect(shapeOf(root)).toEqual({ [`process ${PENDING}`]: ['claim'] });
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes).toMatchObject({ 'kyb.webhook.code': 'duplicate', 'kyb.webhook.outcome': 'accepted' });
    expect(root.attributes).not.toHaveProperty('error.type');
    expect(counterOf(await meterRig.metrics(), METRICS.deliveries)).toEqual([
      {
        attributes: {
          'kyb.webhook.outcome': 'accepted',
          'http.response.status_code': 200,
          'cloudevents.event_type': PENDING,
        },
        value: 1,
      },
      {
        attributes: {
          'kyb.webhook.outcome': 'accepted',
          'http.response.status_code': 200,
          'kyb.webhook.code': 'duplicate',
          'cloudevents.event_type': PENDING,
        },
        value: 1,
      },
    ]);
    await meterRig.shutdown();
  });
});

describe('a delivery refused', () => {
  it('with a forged HMAC: 401 signature_mismatch, a neutral name, no event attribute, status left unset', async () => {
    const meterRig = sdkRig();
    const receiver = receiverWith({
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider }),
    });
    const [event] = testStream([PENDING]);
    const result = await deliver(receiver, await signer.sign(event!, { secret: 'a-forger-guess' }));
    expect({ status: result.status, code: result.code }).toEqual({ status: 401, code: 'signature_mismatch' });

    const root = deliveryTree();
    expect(shapeOf(root)).toBe('process kyb-webhook');
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes).toEqual({
      'messaging.system': 'kyb_webhooks',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'http.request.method': 'POST',
      'http.response.status_code': 401,
      'kyb.webhook.delivery_attempt': 1,
      'kyb.webhook.code': 'signature_mismatch',
      'kyb.webhook.outcome': 'rejected',
      'error.type': 'signature_mismatch',
    });
    expect(counterOf(await meterRig.metrics(), METRICS.deliveries)).toEqual([
      {
        attributes: {
          'kyb.webhook.outcome': 'rejected',
          'http.response.status_code': 401,
          'kyb.webhook.code': 'signature_mismatch',
          'error.type': 'signature_mismatch',
        },
        value: 1,
      },
    ]);
    await meterRig.shutdown();
  });

  it('with a signed body that is no envelope: 400 envelope_invalid, no event attribute', async () => {
    const receiver = receiverWith();
    const delivery = signer.signBytes(JSON.stringify({ hello: 'not an envelope' }));
    const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect({ status: result.status, code: result.code }).toEqual({ status: 400, code: 'envelope_invalid' });
    const root = deliveryTree();
    expect(shapeOf(root)).toBe('process kyb-webhook');
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.attributes).toMatchObject({
      'http.response.status_code': 400,
      'error.type': 'envelope_invalid',
      'kyb.webhook.outcome': 'rejected',
    });
    expect(Object.keys(root.attributes).filter((key) => key.startsWith('cloudevents.'))).toEqual([]);
  });

  it('with a method other than POST: 405, and a method outside HTTP recorded as _OTHER', async () => {
    const receiver = receiverWith();
    const result = await receiver.receive({ method: 'BREW', headers: {}, body: new Uint8Array() });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(result.status).toBe(405);
    expect(deliveryTree().attributes).toMatchObject({
      'http.request.method': '_OTHER',
      'error.type': 'method_not_allowed',
    });
  });
});

describe('a delivery that fails', () => {
  it('in its handler: 500 handler_failed, both spans ERROR, the handler error recorded by its type only', async () => {
    const meterRig = sdkRig();
    const receiver = receiverWith({
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider }),
    });
    receiver.onAny(async function saveRequest() {
      await Promise.resolve();
      throw new TypeError('cannot save Jane Doe, born 1980-04-12');
    });
    const [event] = testStream([PENDING]);
    const result = await deliver(receiver, await signer.sign(event!));
    expect({ status: result.status, code: result.code }).toEqual({ status: 500, code: 'handler_failed' });

    const root = deliveryTree();
    expect(shapeOf(root)).toEqual({ [`process ${PENDING}`]: ['claim', 'handler saveRequest', 'release'] });
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_failed' });
    expect(root.attributes).toMatchObject({ 'error.type': 'handler_failed', 'kyb.webhook.outcome': 'failed' });
    const handler = child(root, 'handler saveRequest');
    expect(handler.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(handler.attributes['error.type']).toBe('TypeError');
    expect(handler.events).toEqual([{ name: 'exception', attributes: { 'exception.type': 'TypeError' } }]);
    expect(counterOf(await meterRig.metrics(), METRICS.deliveries)).toEqual([
      {
        attributes: {
          'kyb.webhook.outcome': 'failed',
          'http.response.status_code': 500,
          'kyb.webhook.code': 'handler_failed',
          'cloudevents.event_type': PENDING,
          'error.type': 'handler_failed',
        },
        value: 1,
      },
    ]);
    await meterRig.shutdown();
  });

  it('in its store: 503 store_unavailable, the claim span ERROR with the error type, the store metric an error', async () => {
    const meterRig = sdkRig();
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379 as user merchant'), {
      code: 'ECONNREFUSED',
    });
    const failing: DedupeStore = {
      claim: () => Promise.reject(down),
      complete: () => Promise.reject(down),
      release: () => Promise.reject(down),
    };
    const receiver = receiverWith({
      store: failing,
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider }),
    });
    receiver.onAny(function audit() {});
    const [event] = testStream([PENDING]);
    const result = await deliver(receiver, await signer.sign(event!));
    expect({ status: result.status, code: result.code }).toEqual({ status: 503, code: 'store_unavailable' });

    const root = deliveryTree();
    // The core leaves the (authenticated) event off a store_unavailable answer today, so the span keeps its neutral
    // name; once the answer carries it, as handler_failed's does, the span is named after the type.
    expect([UNAUTHENTICATED_SPAN_NAME, `process ${PENDING}`]).toContain(root.name);
    expect(root.children.map(shapeOf)).toEqual(['claim']);
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'store_unavailable' });
    expect(root.attributes).toMatchObject({ 'error.type': 'store_unavailable', 'http.response.status_code': 503 });
    const claim = child(root, 'claim');
    expect(claim.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(claim.attributes).toEqual({ 'kyb.webhook.store.operation': 'claim', 'error.type': 'ECONNREFUSED' });
    expect(claim.events).toEqual([{ name: 'exception', attributes: { 'exception.type': 'ECONNREFUSED' } }]);
    expect(histogramOf(await meterRig.metrics(), METRICS.storeDuration)).toEqual([
      {
        attributes: {
          'kyb.webhook.store.operation': 'claim',
          'kyb.webhook.store.outcome': 'error',
          'error.type': 'ECONNREFUSED',
        },
        count: 1,
        sum: expect.any(Number),
      },
    ]);
    await meterRig.shutdown();
  });
});

describe('a handler past handlerTimeoutMs', () => {
  it('answers 503 handler_timeout (delivery span ERROR); the handler span ends when the handler does', async () => {
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      handlerTimeoutMs: 20,
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    });
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    receiver.onAny(async function slowSave() {
      await finished;
    });
    const [event] = testStream([PENDING]);
    const result = await deliver(receiver, await signer.sign(event!));
    expect({ status: result.status, code: result.code }).toEqual({ status: 503, code: 'handler_timeout' });
    const delivery = rig.spans().find((span) => span.kind === SpanKind.CONSUMER);
    expect(delivery!.name).toBe(`process ${PENDING}`);
    expect(delivery!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_timeout' });
    expect(rig.spans().map((span) => span.name)).not.toContain('handler slowSave');

    finish();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const root = deliveryTree();
    expect(child(root, 'handler slowSave').status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe('what is never recorded', () => {
  it('an onUnauthenticated handler span names no event: its type and id are what the sender wrote', async () => {
    const receiver = createReceiver({
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      now: () => NOW,
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    });
    receiver.onUnauthenticated(function auditUnauthenticated() {});
    const [event] = testStream([PENDING]);
    const forged = { ...event!, event: 'kyb.forged.attacker_chosen_type', event_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    const headers = { 'content-type': 'application/json' };
    expect(
      (await deliver(receiver, { headers, body: JSON.stringify(forged) } as unknown as SignedDelivery)).status,
    ).toBe(200);
    const handler = rig.spans().find((span) => span.name === 'handler auditUnauthenticated')!;
    expect(handler.attributes).toEqual({ 'kyb.webhook.handler': 'auditUnauthenticated' });
    expect(JSON.stringify(rig.spans().map((span) => [span.name, span.attributes]))).not.toMatch(/forged|01ARZ3ND/);
  });

  it('no secret, signature, token, body text, answer value or handler message in any span, event or metric', async () => {
    const meterRig = sdkRig();
    const telemetry = openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: meterRig.meterProvider });
    const receiver = receiverWith({ telemetry, attested: true });
    const seen: unknown[] = [];
    receiver.on(RELEASED, async (_event, { answers }) => {
      seen.push(...answers.byName('director_name').map((answer) => answer.value));
    });
    receiver.on(PENDING, function failsWithPersonalData() {
      throw new Error('Jane Doe (HRB 123456 B) could not be saved');
    });
    const [released, pending] = testStream([RELEASED, PENDING]);
    const deliveries = [
      await signer.sign(released!),
      await signer.sign(pending!),
      await signer.sign(pending!, { secret: 'forged' }),
    ];
    for (const delivery of deliveries) await deliver(receiver, delivery);
    await deliver(receiver, deliveries[0]!); // and a duplicate
    expect(seen).toEqual(['Jane Doe', 'Rahul Mehta']);

    const exported = JSON.stringify({
      spans: rig.spans().map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
        links: span.links,
      })),
      metrics: (await meterRig.metrics()).map((metric) => ({
        descriptor: metric.descriptor,
        points: metric.dataPoints.map((point) => point.attributes),
      })),
    });
    expect(rig.spans().length).toBeGreaterThan(8);
    const forbidden = [
      SECRET,
      'forged',
      ...deliveries.flatMap((delivery) => [delivery.text, delivery.headers['service-kyb-signature'] ?? '']),
      ...Object.values(deliveries[0]!.headers).filter((value) => value.length > 40), // the attestation, if a header
      JSON.parse(deliveries[0]!.text).attestation as string,
      ...defaultReleasedAnswers().map((answer) => String(answer.value)),
      ...Object.values(TEST_SUBJECTS),
      'could not be saved',
    ].filter((value) => value.length > 0);
    expect(forbidden.length).toBeGreaterThan(10);
    for (const value of forbidden)
      expect(exported, `exported telemetry holds ${value.slice(0, 30)}…`).not.toContain(value);
    // And ids only on spans: no metric data point carries one.
    const metricAttributes = (await meterRig.metrics()).flatMap((metric) =>
      metric.dataPoints.map((point) => point.attributes),
    );
    const idKeys = [A.messagingMessageId, A.cloudEventsEventId, A.cloudEventsEventSubject, A.seq];
    expect(
      metricAttributes.flatMap((attributes: Attributes) =>
        Object.keys(attributes).filter((k) => idKeys.includes(k as never)),
      ),
    ).toEqual([]);
    for (const id of [released!.event_id, pending!.event_id, released!.stream_id])
      expect(JSON.stringify(metricAttributes)).not.toContain(id);
    await meterRig.shutdown();
  });
});

describe('in the application around it', () => {
  afterEach(() => {
    trace.disable();
    metrics.disable();
  });

  it('takes the global providers: the delivery span is a child of the active span, the handler’s own span of the handler span', async () => {
    trace.setGlobalTracerProvider(rig.tracerProvider);
    const meterRig = sdkRig();
    metrics.setGlobalMeterProvider(meterRig.meterProvider);
    const receiver = receiverWith({ telemetry: openTelemetry() });
    receiver.onAny(async function saveRequest() {
      await trace.getTracer('merchant-app').startActiveSpan('INSERT kyb_requests', async (span) => {
        await Promise.resolve();
        span.end();
      });
    });
    const [event] = testStream([PENDING]);
    const delivery = await signer.sign(event!);
    await trace.getTracer('http-server').startActiveSpan('POST /webhooks/kyb', async (server) => {
      await deliver(receiver, delivery);
      server.end();
    });
    const [root, ...others] = spanTrees(rig.spans());
    expect(others).toEqual([]);
    expect(shapeOf(root!)).toEqual({
      'POST /webhooks/kyb': [
        {
          [`process ${PENDING}`]: ['claim', { 'handler saveRequest': ['INSERT kyb_requests'] }, 'complete'],
        },
      ],
    });
    expect(counterOf(await meterRig.metrics(), METRICS.deliveries)).toHaveLength(1);
    await meterRig.shutdown();
  });

  it('with no provider registered anywhere, delivers as before and records nothing', async () => {
    const receiver = receiverWith({ telemetry: openTelemetry() });
    let ran = false;
    receiver.onAny(() => {
      ran = true;
    });
    const [event] = testStream([PENDING]);
    expect((await deliver(receiver, await signer.sign(event!))).status).toBe(200);
    expect(ran).toBe(true);
    expect(rig.spans()).toEqual([]);
  });

  it('is enabled only while a provider is registered or passed, and the receiver skips it otherwise', async () => {
    const layer = openTelemetry();
    let arounds = 0;
    const counting = {
      ...layer,
      enabled: () => layer.enabled!(),
      around: <R>(operation: never, traceObject: never, run: () => R) => {
        arounds += 1;
        return layer.around(operation, traceObject, run);
      },
    };
    const receiver = receiverWith({ telemetry: counting });
    receiver.onAny(() => {});
    const [first, second, third] = testStream([PENDING, PENDING, PENDING]);
    expect(layer.enabled!()).toBe(false);
    await deliver(receiver, await signer.sign(first!));
    expect(arounds).toBe(0);
    // A tracer provider registered later is taken from then on.
    trace.setGlobalTracerProvider(rig.tracerProvider);
    expect(layer.enabled!()).toBe(true);
    await deliver(receiver, await signer.sign(second!));
    expect(arounds).toBe(4); // the delivery, its claim, its handler run and its complete
    trace.disable();
    // A meter provider alone enables it too.
    const meterRig = sdkRig();
    metrics.setGlobalMeterProvider(meterRig.meterProvider);
    // Seen within 64 operations (the global meter provider is looked up again every 64th while nothing is registered).
    const checks = Array.from({ length: 64 }, () => layer.enabled!());
    expect(checks.indexOf(true)).toBeGreaterThanOrEqual(0);
    expect(checks.slice(checks.indexOf(true)).every(Boolean)).toBe(true);
    await deliver(receiver, await signer.sign(third!));
    expect(counterOf(await meterRig.metrics(), METRICS.deliveries)).toHaveLength(1);
    await meterRig.shutdown();
    // Providers passed in: always enabled.
    expect(openTelemetry({ tracerProvider: rig.tracerProvider }).enabled!()).toBe(true);
  });
});

describe('its options', () => {
  it.each<[string, unknown, string]>([
    [
      'a tracer where the provider goes',
      { tracerProvider: { startSpan() {} } },
      '`tracerProvider` has no getTracer method',
    ],
    [
      'a meter where the provider goes',
      { meterProvider: { createCounter() {} } },
      '`meterProvider` has no getMeter method',
    ],
    ['a tracer under another name', { tracer: trace.getTracer('x') }, '`tracer`'],
    [
      'a promise of a provider',
      { meterProvider: Promise.resolve(metrics.getMeterProvider()) },
      '`meterProvider` must be an object',
    ],
    ['no object at all', 'console', 'openTelemetry needs an options object'],
  ])('refuses %s at creation (config_invalid, naming the fix)', (_case, options, words) => {
    let thrown: unknown;
    try {
      openTelemetry(options as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'config_invalid' });
    expect((thrown as Error).message).toContain(words);
  });

  it('accepts none, an empty object, or providers from the API and the SDK', () => {
    expect(() => openTelemetry()).not.toThrow();
    expect(() => openTelemetry({})).not.toThrow();
    expect(() => openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider })).not.toThrow();
    expect(() => openTelemetry({ tracerProvider: trace.getTracerProvider() })).not.toThrow();
  });
});

describe('around() itself', () => {
  const layer = () => openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider });

  it('returns the very promise run returned, and its value when run is synchronous', async () => {
    const promise = Promise.resolve('value');
    expect(layer().around('store', { operation: 'claim', subject: 'k' }, () => promise)).toBe(promise);
    expect(layer().around('store', { operation: 'claim', subject: 'k' }, () => 42)).toBe(42);
    await promise;
  });

  it('rethrows what run threw, after ending the span with the error type', () => {
    const error = new RangeError('boom with personal data');
    const storeTrace: { operation: string; subject: string; error?: unknown } = { operation: 'release', subject: 'k' };
    expect(() =>
      layer().around('store', storeTrace, () => {
        storeTrace.error = error; // what the core does before rethrowing
        throw error;
      }),
    ).toThrow(error);
    const [span] = rig.spans();
    expect({ name: span!.name, status: span!.status, type: span!.attributes['error.type'] }).toEqual({
      name: 'release',
      status: { code: SpanStatusCode.ERROR },
      type: 'RangeError',
    });
  });

  it('runs a lazy thenable once: one native promise of it for the span and for the caller', async () => {
    let executions = 0;
    const lazy = {
      then<R1, R2>(onFulfilled?: (value: string) => R1, onRejected?: (reason: unknown) => R2) {
        executions++;
        return Promise.resolve('rows').then(onFulfilled, onRejected);
      },
    };
    const returned = layer().around('handler', { eventId: 'e', eventType: PENDING, handler: 'h' }, () => lazy);
    expect(await returned).toBe('rows');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect({ executions, spans: rig.spans().map((span) => span.name) }).toEqual({
      executions: 1,
      spans: ['handler h'],
    });
  });

  it('runs an operation it does not know (a newer core’s) once, and rethrows its failure', () => {
    let runs = 0;
    const failure = new Error('store down');
    const unknown = 'enqueue' as unknown as Parameters<ReturnType<typeof layer>['around']>[0];
    expect(() =>
      layer().around(unknown, {} as never, () => {
        runs++;
        throw failure;
      }),
    ).toThrow(failure);
    expect(runs).toBe(1);
  });

  it('enabled() is false, never a throw, when the global meter provider throws', () => {
    const otel = openTelemetry();
    metrics.setGlobalMeterProvider({
      getMeter() {
        throw new Error('meter provider misconfigured');
      },
    });
    try {
      // The global meter provider is looked up every 64th check.
      for (let check = 0; check < 130; check++) expect(otel.enabled!()).toBe(false);
    } finally {
      metrics.disable();
    }
  });

  it('does not leave a rejection of its own unhandled when run rejects', async () => {
    const rejected = Promise.reject(new Error('x'));
    const returned = layer().around('handler', { eventId: 'e', eventType: PENDING, handler: 'h' }, () => rejected);
    await expect(returned).rejects.toThrow('x');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(rig.spans().map((span) => span.name)).toEqual(['handler h']);
  });
});

describe('errorTypeOf', () => {
  it.each([
    ['a string code', Object.assign(new Error('m'), { code: 'ECONNRESET' }), 'ECONNRESET'],
    ['the class name', new TypeError('m'), 'TypeError'],
    ['a custom class', new (class StoreDown extends Error {})('m'), 'StoreDown'],
    ['a named custom error', Object.assign(new Error('m'), { name: 'StoreDown' }), 'StoreDown'],
    ['a name that is text', Object.assign(new Error('m'), { name: 'Jane Doe failed' }), 'Error'],
    ['a thrown string', 'Jane Doe', '_OTHER'],
    ['undefined', undefined, '_OTHER'],
  ])('%s', (_what, error, expected) => {
    expect(errorTypeOf(error)).toBe(expected);
  });
});
