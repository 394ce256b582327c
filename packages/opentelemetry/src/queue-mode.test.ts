// Queue mode (docs/queue-mode.md) as the layer shows it: the delivery span ends once the event is queued; the worker's
// handler run and store calls are spans of the worker's own (the job carries no trace context from the receiving
// span yet, so there is no link between the two: see the README's "Not yet").
import { context, SpanKind } from '@opentelemetry/api';
import { createMemoryQueue, createMemoryStore, createQueueWorker, createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, testStream } from '@kyb-webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { METRICS, openTelemetry } from './index.js';
import { asyncContextManager, counterOf, sdkRig, shapeOf, spanTrees, type SpanNode } from './test-helpers.js';

const rig = sdkRig();
context.setGlobalContextManager(asyncContextManager());
afterAll(async () => {
  await rig.shutdown();
  context.disable();
});

async function until(done: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('queue mode', () => {
  it('the delivery span answers queued; the worker runs the handler under spans of its own', async () => {
    const signer = await createTestSigner();
    const queue = createMemoryQueue({ retryDelayMs: 1 });
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      logger: false,
      store: createMemoryStore(),
      queue,
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    });
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
    rig.reset();

    const worker = createQueueWorker(receiver);
    await worker.start();
    await until(() => queue.backlog() === 0);
    await worker.stop();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Today each is a root span of the worker's (the core has no 'job' operation to wrap them in yet).
    const flatten = (node: SpanNode): SpanNode[] => [node, ...node.children.flatMap(flatten)];
    const worked = spanTrees(rig.spans()).flatMap(flatten);
    expect(worked.map((span) => span.name)).toEqual(['claim', 'handler audit', 'complete']);
    expect(worked[1]!.attributes).toEqual({
      'kyb.webhook.handler': 'audit',
      'cloudevents.event_type': 'kyb.data_request.pending_approval',
      'cloudevents.event_id': event!.event_id,
    });
  });

  it('counts a stream blocked when a job fails its last attempt, by error type and with no id', async () => {
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
    expect(counterOf(await rig.metrics(), METRICS.streamsBlocked)).toEqual([
      { attributes: { 'error.type': 'handler_failed' }, value: 1 },
    ]);
  });
});
