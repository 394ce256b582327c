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
import { TRACING_CHANNELS, type ClientRequestTrace } from './channels.js';
import { Observers, observersOf, type ReceiverTelemetry, type TracedOperation } from './observers.js';
import { diagnostics, type TracePhase as Phase } from '../../test-channels.js';

/** A tracing channel subscriber: one handler per phase, each telling `heard` its phase and the message. */
function handlersOf(heard: (phase: Phase, message: unknown) => void): Record<Phase, (message: unknown) => void> {
  const on = (phase: Phase) => (message: unknown) => heard(phase, message);
  return {
    start: on('start'),
    end: on('end'),
    asyncStart: on('asyncStart'),
    asyncEnd: on('asyncEnd'),
    error: on('error'),
  };
}

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

describe("the telemetry option's enabled()", () => {
  it('is asked before each operation: false skips around() altogether, true or absent runs through it', async () => {
    const operations: TracedOperation[] = [];
    let recording = false;
    const telemetry: ReceiverTelemetry = {
      enabled: () => recording,
      around(operation, _trace, run) {
        operations.push(operation);
        return run();
      },
    };
    const receiver = await deliverThrough(telemetry);
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(event.event_id));
    const [first, second] = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.pending_approval']);
    const deliver = async (event: typeof first) => {
      const { headers, body } = await signer.sign(event!);
      return receiver.receive({ method: 'POST', headers, body });
    };
    expect((await deliver(first)).status).toBe(200);
    expect(operations).toEqual([]);
    recording = true;
    expect((await deliver(second)).status).toBe(200);
    expect(operations).toEqual(['receive', 'store', 'handler', 'store']);
    expect(ran).toEqual([first!.event_id, second!.event_id]);
  });
});

describe.runIf(diagnostics)("the telemetry option's enabled() beside a channel subscriber", () => {
  it('false skips around() while the subscriber still gets every message', async () => {
    const operations: TracedOperation[] = [];
    const telemetry: ReceiverTelemetry = {
      enabled: () => false,
      around(operation, _trace, run) {
        operations.push(operation);
        return run();
      },
    };
    const heard: Phase[] = [];
    const handlers = handlersOf((which) => void heard.push(which));
    const channel = diagnostics!.tracingChannel(TRACING_CHANNELS.receive);
    channel.subscribe(handlers);
    try {
      const receiver = await deliverThrough(telemetry);
      const { headers, body } = await signer.sign(testStream(['kyb.data_request.pending_approval'])[0]!);
      expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(heard).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(operations).toEqual([]);
  });
});

describe('observersOf (the client and the other packages of the family)', () => {
  const trace = (): ClientRequestTrace => ({
    method: 'GET',
    route: '/api/v1/kyb/data-requests/{id}/events',
    origin: 'https://api.kyb.example.com',
    attempt: 1,
  });

  it("runs an operation through the telemetry option's around(), the trace filled in by settled", async () => {
    const seen: [TracedOperation, Record<string, unknown>][] = [];
    const telemetry: ReceiverTelemetry = {
      around(operation, traced, run) {
        const result = run();
        void Promise.resolve(result).then(() => seen.push([operation, { ...traced }]));
        return result;
      },
    };
    const requests = observersOf('request', telemetry);
    expect(requests.active).toBe(true);
    const answer = await requests.run(
      trace(),
      async () => 204,
      (traced, status) => (traced.status = status),
    );
    expect(answer).toBe(204);
    await Promise.resolve();
    expect(seen).toEqual([['request', { ...trace(), status: 204 }]]);
  });

  it.runIf(diagnostics)('publishes on the client request channel while someone subscribes', async () => {
    const channel = diagnostics!.tracingChannel(TRACING_CHANNELS.clientRequest);
    const seen: [Phase, Record<string, unknown>][] = [];
    const handlers = handlersOf(
      (which, message) => void seen.push([which, { ...(message as Record<string, unknown>) }]),
    );
    const requests = observersOf('request', undefined);
    expect(requests.active).toBe(false);
    channel.subscribe(handlers);
    try {
      expect(requests.active).toBe(true);
      await requests.run(
        trace(),
        async () => 200,
        (traced, status) => (traced.status = status),
      );
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(seen.map(([which]) => which)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(seen.at(-1)![1]).toEqual({ ...trace(), status: 200 });
  });

  it('where the runtime has no diagnostics_channel (no channels), watches through the telemetry option alone', () => {
    const unwatched = new Observers('request', undefined, undefined);
    expect(unwatched.active).toBe(false);
    const operations: TracedOperation[] = [];
    const telemetry: ReceiverTelemetry = {
      around(operation, _trace, run) {
        operations.push(operation);
        return run();
      },
    };
    const watched = new Observers('request', undefined, telemetry);
    expect(watched.active).toBe(true);
    const traced = trace();
    expect(
      watched.run(
        traced,
        () => 200,
        (t, status) => (t.status = status),
      ),
    ).toBe(200);
    expect(operations).toEqual(['request']);
    expect(traced.status).toBe(200);
  });
});
