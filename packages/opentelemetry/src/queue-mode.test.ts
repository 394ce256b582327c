// Queue mode (docs/queue-mode.md) as the layer shows it: the delivery span ends once the event is queued; the worker's
// run of the job is a CONSUMER span of its own, linked to the delivery's through the trace context the job carries
// (the registered propagator's: W3C trace context here, as the SDK registers by default), with the claim, the
// handlers and the settle as its children.
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { createMemoryQueue, createMemoryStore, createQueueWorker, createReceiver } from '@kyb-webhooks/core';
import type { QueueJob } from '@kyb-webhooks/core/queue';
import { createTestSigner, testStream } from '@kyb-webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { METRICS, openTelemetry } from './index.js';
import { asyncContextManager, counterOf, histogramOf, sdkRig, shapeOf, spanTrees } from './test-helpers.js';

const rig = sdkRig();
context.setGlobalContextManager(asyncContextManager());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
afterAll(async () => {
  await rig.shutdown();
  context.disable();
  propagation.disable();
});

async function until(done: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function queuedReceiver(queue = createMemoryQueue({ retryDelayMs: 1 }), signer?: { secrets: Record<string, string> }) {
  return createReceiver({
    secrets: { ...signer!.secrets },
    logger: false,
    store: createMemoryStore(),
    queue,
    telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
  });
}

describe('queue mode', () => {
  it('the delivery span answers queued; the worker runs the job under a span linked to it', async () => {
    rig.reset();
    const signer = await createTestSigner();
    const queue = createMemoryQueue({ retryDelayMs: 1 });
    const seen: QueueJob[] = [];
    const receiver = queuedReceiver(queue, signer);
    receiver.onAny(async function audit() {});
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    const result = await receiver.receive({ method: 'POST', headers, body });
    expect({ status: result.status, code: result.code }).toEqual({ status: 200, code: 'queued' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    const [delivery, ...others] = spanTrees(rig.spans());
    expect(others).toEqual([]);
    expect(shapeOf(delivery!)).toBe('process kyb.data_request.pending_approval');
    expect(delivery!.kind).toBe(SpanKind.CONSUMER);
    expect(delivery!.attributes).toMatchObject({
      'kyb.webhook.code': 'queued',
      'kyb.webhook.outcome': 'accepted',
      'messaging.message.id': event!.event_id,
    });
    const deliverySpan = rig.spans()[0]!.spanContext();
    rig.reset();

    const work = queue.work.bind(queue);
    queue.work = (run, options) => work((job) => (seen.push(job), run(job)), options);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The job carried the delivery's trace context, and only that.
    expect(seen[0]!.event.trace).toEqual({
      traceparent: `00-${deliverySpan.traceId}-${deliverySpan.spanId}-01`,
    });
    const [job, ...more] = spanTrees(rig.spans());
    expect(more).toEqual([]);
    expect(shapeOf(job!)).toEqual({
      'process kyb.data_request.pending_approval': ['claim', 'handler audit', 'complete'],
    });
    expect(job!.kind).toBe(SpanKind.CONSUMER);
    expect(job!.attributes).toEqual({
      'messaging.system': 'kyb_webhooks',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': 'memory queue',
      'messaging.message.id': event!.event_id,
      'cloudevents.event_id': event!.event_id,
      'cloudevents.event_type': 'kyb.data_request.pending_approval',
      'cloudevents.event_subject': event!.stream_id,
      'kyb.webhook.seq': event!.seq,
      'kyb.webhook.job.attempt': 1,
      'kyb.webhook.job.outcome': 'done',
    });
    const jobSpan = rig.spans().find((span) => span.name.startsWith('process'))!;
    // Its own trace, linked to the delivery's span (which ended when the event was queued).
    expect(jobSpan.spanContext().traceId).not.toBe(deliverySpan.traceId);
    expect(jobSpan.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: deliverySpan.traceId, spanId: deliverySpan.spanId }),
    ]);
    expect(job!.children[1]!.attributes).toEqual({
      'kyb.webhook.handler': 'audit',
      'cloudevents.event_type': 'kyb.data_request.pending_approval',
      'cloudevents.event_id': event!.event_id,
    });
    const collected = await rig.metrics();
    expect(counterOf(collected, METRICS.jobs)).toEqual([
      {
        attributes: {
          'messaging.destination.name': 'memory queue',
          'cloudevents.event_type': 'kyb.data_request.pending_approval',
          'kyb.webhook.job.outcome': 'done',
        },
        value: 1,
      },
    ]);
    expect(histogramOf(collected, METRICS.jobDuration).map((point) => point.count)).toEqual([1]);
    const [wait] = histogramOf(collected, METRICS.jobWait);
    expect(wait!.count).toBe(1);
    expect(wait!.sum).toBeGreaterThanOrEqual(0);
    expect(wait!.sum).toBeLessThan(5);
  });

  it('a job whose carrier was tampered with in the queue runs as usual, with no link', async () => {
    rig.reset();
    const signer = await createTestSigner();
    const queue = createMemoryQueue({ retryDelayMs: 1 });
    const receiver = queuedReceiver(queue, signer);
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(event.event_id));
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    await receiver.receive({ method: 'POST', headers, body });
    rig.reset();
    const tampered = (job: QueueJob): QueueJob => ({
      ...job,
      event: { ...job.event, trace: { traceparent: 'not a trace context', ['x'.repeat(600)]: 'y', n: 1 } as never },
    });
    const work = queue.work.bind(queue);
    queue.work = (run, options) => work((job) => run(tampered(job)), options);
    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    expect(ran).toEqual([event!.event_id]);
    const jobSpan = rig.spans().find((span) => span.name.startsWith('process'))!;
    expect(jobSpan.links).toEqual([]);
    expect(jobSpan.attributes['kyb.webhook.job.outcome']).toBe('done');
  });

  it('a worker already running in the process: the job span is still a root of its own, linked, not a child', async () => {
    rig.reset();
    const signer = await createTestSigner();
    const queue = createMemoryQueue({ retryDelayMs: 1 });
    const receiver = queuedReceiver(queue, signer);
    receiver.onAny(async function audit() {});
    const worker = createQueueWorker(receiver);
    await worker.start(); // a single-process app: the worker takes the job inside the delivery's context
    try {
      const [event] = testStream(['kyb.data_request.pending_approval']);
      const { headers, body } = await signer.sign(event!);
      expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('queued');
      await until(() => rig.spans().some((span) => span.attributes['kyb.webhook.job.outcome'] !== undefined));
    } finally {
      await worker.stop();
    }
    const delivery = rig.spans().find((span) => span.attributes['kyb.webhook.code'] === 'queued')!;
    const job = rig.spans().find((span) => span.attributes['kyb.webhook.job.outcome'] !== undefined)!;
    expect(job.parentSpanContext).toBeUndefined();
    expect(job.spanContext().traceId).not.toBe(delivery.spanContext().traceId);
    expect(job.links.map((link) => link.context.spanId)).toEqual([delivery.spanContext().spanId]);
  });

  it('carries trace ids only: the baggage of the delivery context stays out of the queue', async () => {
    rig.reset();
    propagation.disable(); // a global propagator is registered once: the one set above goes first
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    );
    try {
      const signer = await createTestSigner();
      const queue = createMemoryQueue({ retryDelayMs: 1 });
      const receiver = queuedReceiver(queue, signer);
      const [event] = testStream(['kyb.data_request.pending_approval']);
      const { headers, body } = await signer.sign(event!);
      const baggage = propagation.createBaggage({ 'user.email': { value: 'jane@example.com' } });
      const answer = await context.with(propagation.setBaggage(context.active(), baggage), () =>
        receiver.receive({ method: 'POST', headers, body }),
      );
      expect(answer.code).toBe('queued');
      const seen: QueueJob[] = [];
      const work = queue.work.bind(queue);
      queue.work = (run, options) => work((job) => (seen.push(job), run(job)), options);
      const worker = createQueueWorker(receiver);
      await worker.start();
      await until(() => queue.backlog() === 0);
      await worker.stop();
      expect(Object.keys(seen[0]!.event.trace ?? {})).toEqual(['traceparent']);
      expect(JSON.stringify(seen[0]!.event)).not.toContain('jane');
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });

  it('counts a stream blocked when a job fails its last attempt, by error type and with no id', async () => {
    rig.reset();
    const signer = await createTestSigner();
    const queue = createMemoryQueue({ retryDelayMs: 1, retryLimit: 1 });
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      logger: false,
      store: createMemoryStore(),
      queue,
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    });
    receiver.onAny(() => {
      throw new Error('always fails');
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    await receiver.receive({ method: 'POST', headers, body });
    const worker = createQueueWorker(receiver);
    await worker.start();
    let blocked = 0;
    const deadline = Date.now() + 5_000;
    while (blocked === 0 && Date.now() < deadline) {
      blocked = (await queue.blockedStreams()).length;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await worker.stop();
    expect(blocked).toBe(1);
    const collected = await rig.metrics();
    expect(counterOf(collected, METRICS.streamsBlocked)).toEqual([
      { attributes: { 'error.type': 'handler_failed' }, value: 1 },
    ]);
    // Each failed run is a job span in error, its handler span a child; the jobs counter says failed, twice.
    const jobs = spanTrees(rig.spans()).filter((node) => node.attributes['kyb.webhook.job.attempt'] !== undefined);
    expect(
      jobs.map((job) => [job.status.code, job.attributes['error.type'], job.attributes['kyb.webhook.job.attempt']]),
    ).toEqual([
      [SpanStatusCode.ERROR, 'handler_failed', 1],
      [SpanStatusCode.ERROR, 'handler_failed', 2],
    ]);
    expect(counterOf(collected, METRICS.jobs)).toContainEqual({
      attributes: {
        'messaging.destination.name': 'memory queue',
        'cloudevents.event_type': 'kyb.data_request.pending_approval',
        'kyb.webhook.job.outcome': 'failed',
        'kyb.webhook.code': 'handler_failed',
        'error.type': 'handler_failed',
      },
      value: 2,
    });
  });
});
