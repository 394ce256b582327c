// The receive trace as an observability layer sees it through the `telemetry` option (the tracing channel gets the
// same object, see channels.test.ts): the method and attempt known before verifying, the answer once settled, and no
// field at all for what the delivery did not carry.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { ReceiveTrace } from './channels.js';
import type { ReceiverTelemetry } from './observers.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'receive-trace-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** A receiver whose telemetry keeps each receive trace as around() got it and once run's promise settled. */
function watchedReceiver() {
  const deliveries: { started: Record<string, unknown>; settled: Promise<Record<string, unknown>> }[] = [];
  const telemetry: ReceiverTelemetry = {
    around(operation, trace, run) {
      const result = run();
      if (operation === 'receive') {
        deliveries.push({
          started: { ...trace },
          settled: Promise.resolve(result).then((): Record<string, unknown> => ({ ...trace })),
        });
      }
      return result;
    },
  };
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    logger: false,
    store: createMemoryStore({ now: () => NOW }),
    telemetry,
  });
  return { receiver, deliveries };
}

describe('the receive trace', () => {
  it('names the method the delivery came with, and POST when the adapter vouches for it without one', async () => {
    const { receiver, deliveries } = watchedReceiver();
    receiver.onAny(() => {});
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    expect((await receiver.receive({ method: 'PUT', headers, body })).status).toBe(405);
    expect((await receiver.receive({ headers, body })).status).toBe(200);
    expect(deliveries.map(({ started }) => started.method)).toEqual(['PUT', 'POST']);
    expect(await deliveries[0]!.settled).toMatchObject({ method: 'PUT', status: 405, code: 'method_not_allowed' });
  });

  it('has no deliveryAttempt field for a delivery without Service-Delivery-Attempt', async () => {
    const { receiver, deliveries } = watchedReceiver();
    receiver.onAny(() => {});
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    const withoutAttempt = Object.fromEntries(
      Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'service-delivery-attempt'),
    );
    expect(Object.keys(withoutAttempt).length).toBeLessThan(Object.keys(headers).length);
    expect((await receiver.receive({ method: 'POST', headers: withoutAttempt, body })).status).toBe(200);
    expect(Object.keys(deliveries[0]!.started)).toEqual(['method']);
    expect(await deliveries[0]!.settled).not.toHaveProperty('deliveryAttempt');
  });

  it('has no code field for a plain 200, only for an answer that has one', async () => {
    const { receiver, deliveries } = watchedReceiver();
    receiver.onAny(() => {});
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('duplicate');
    const [first, again] = await Promise.all(deliveries.map(({ settled }) => settled));
    expect(first).toMatchObject({ status: 200, eventId: event!.event_id } satisfies Partial<ReceiveTrace>);
    expect(first).not.toHaveProperty('code');
    expect(again).toMatchObject({ status: 200, code: 'duplicate' });
  });
});
