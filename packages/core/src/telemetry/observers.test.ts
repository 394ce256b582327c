// The receiver's `telemetry` option, as an observability layer sees it: every delivery, handler run and store call
// goes through around(), nested as they run, with the work inside run in the layer's context (what OpenTelemetry's
// context.with does), and the trace filled in by the time run's promise settles.
import { AsyncLocalStorage } from 'node:async_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createReceiver } from '../receiver.js';
import type { DedupeStore } from '../store/dedupe.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { ReceiverTelemetry, TracedOperation } from './observers.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'telemetry-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** A layer that runs each operation in a context naming it and its parent, and records each trace once settled. */
function recordingTelemetry() {
  const context = new AsyncLocalStorage<string>();
  const finished: { operation: TracedOperation; parent: string | undefined; trace: Record<string, unknown> }[] = [];
  const telemetry: ReceiverTelemetry = {
    around(operation, trace, run) {
      const parent = context.getStore();
      const record = () => void finished.push({ operation, parent, trace: { ...trace } });
      let result: ReturnType<typeof run>;
      try {
        result = context.run(operation, run);
      } catch (error) {
        record();
        throw error;
      }
      if (result instanceof Promise) void result.then(record, record);
      else record();
      return result;
    },
  };
  return { telemetry, context, finished };
}

async function deliverThrough(
  telemetry: ReceiverTelemetry,
  store: DedupeStore = createMemoryStore({ now: () => NOW }),
) {
  const receiver = createReceiver({ secrets: { '1': SECRET }, now: () => NOW, logger: false, store, telemetry });
  return receiver;
}

describe('the telemetry option', () => {
  it('runs a delivery, its store calls and its handler nested, each in the context of the one around it', async () => {
    const { telemetry, context, finished } = recordingTelemetry();
    const receiver = await deliverThrough(telemetry);
    const seenInHandler: (string | undefined)[] = [];
    receiver.onAny(async function audit() {
      await Promise.resolve();
      seenInHandler.push(context.getStore());
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    const result = await receiver.receive({ method: 'POST', headers, body });
    expect(result.status).toBe(200);
    expect(seenInHandler).toEqual(['handler']);
    await Promise.resolve();
    expect(
      finished.map(({ operation, parent, trace }) => [operation, parent, trace.operation ?? trace.handler]),
    ).toEqual([
      ['store', 'receive', 'claim'],
      ['handler', 'receive', 'audit'],
      ['store', 'receive', 'complete'],
      ['receive', undefined, undefined],
    ]);
    expect(finished.at(-1)!.trace).toEqual({
      method: 'POST',
      deliveryAttempt: 1,
      status: 200,
      eventId: event!.event_id,
      eventType: 'kyb.data_request.pending_approval',
      streamId: event!.stream_id,
      seq: event!.seq,
      apiVersion: event!.api_version,
      signedAt: NOW / 1000,
    });
  });

  it('fills the error of a failed handler and of a failed store call', async () => {
    const { telemetry, finished } = recordingTelemetry();
    const down = new Error('connection refused');
    const store = createMemoryStore({ now: () => NOW });
    const failing: DedupeStore = {
      claim: (key, options) => store.claim(key, options),
      complete: (key, token, options) => store.complete(key, token, options),
      release: () => Promise.reject(down),
    };
    const receiver = await deliverThrough(telemetry, failing);
    receiver.onAny(() => {
      throw new Error('handler broke');
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(500);
    const handler = finished.find((entry) => entry.operation === 'handler')!;
    expect((handler.trace.error as Error).message).toBe('handler broke');
    const release = finished.find((entry) => entry.trace.operation === 'release')!;
    expect(release.trace).toMatchObject({ subject: event!.event_id, error: down });
    expect(finished.at(-1)!.trace).toMatchObject({ status: 500, code: 'handler_failed' });
  });

  it('gives no signedAt on a receiver without secrets, whose signature header nothing verifies', async () => {
    const { telemetry, finished } = recordingTelemetry();
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: false,
      telemetry,
    });
    receiver.onAny(() => {});
    const [event] = testStream(['kyb.data_request.released']);
    const { headers, body } = await signer.sign(await signer.withAttestation(event!));
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    await Promise.resolve();
    const delivery = finished.find((entry) => entry.operation === 'receive')!;
    expect(delivery.trace).toMatchObject({ status: 200, eventId: event!.event_id });
    expect(delivery.trace).not.toHaveProperty('signedAt');
  });

  it('refuses a telemetry option without around(), naming the fix', () => {
    expect(() => createReceiver({ secrets: { '1': SECRET }, telemetry: {} as never })).toThrow(KybWebhookError);
    expect(() => createReceiver({ secrets: { '1': SECRET }, telemetry: {} as never })).toThrow(
      /`telemetry` has no around method/,
    );
  });
});
