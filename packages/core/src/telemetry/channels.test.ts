// The tracing channels as a subscriber sees them (docs/observability.md), on every runtime the core runs on: Node,
// Bun and Deno have diagnostics_channel (through process.getBuiltinModule, as the core finds it); workerd without
// nodejs_compat has not, and there the receiver must answer exactly as it does elsewhere, publishing nothing.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import type { ReceiverOptions } from '../receiver-types.js';
import { createMemoryQueue } from '../queue/memory-queue.js';
import { createQueueWorker } from '../queue/worker.js';
import { streamOrdering } from '../ordering/stream-ordering.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { DedupeStore } from '../store/dedupe.js';
import { TRACING_CHANNELS, type HandlerTrace, type StoreTrace } from './channels.js';
import { diagnostics, type TracePhase as Phase } from '../../test-channels.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'channels-secret-do-not-publish';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** Every message of the named tracing channels, as [channel, phase, a copy of the context at that moment]. */
function record(...names: (keyof typeof TRACING_CHANNELS)[]) {
  const seen: [string, Phase, Record<string, unknown>][] = [];
  for (const name of names) {
    const channel = diagnostics!.tracingChannel(TRACING_CHANNELS[name]);
    const phase = (which: Phase) => (message: unknown) =>
      void seen.push([name, which, { ...(message as Record<string, unknown>) }]);
    const handlers = {
      start: phase('start'),
      end: phase('end'),
      asyncStart: phase('asyncStart'),
      asyncEnd: phase('asyncEnd'),
      error: phase('error'),
    };
    channel.subscribe(handlers);
    unsubscribers.push(() => channel.unsubscribe(handlers));
  }
  return seen;
}
let unsubscribers: (() => void)[] = [];
afterEach(() => {
  for (const unsubscribe of unsubscribers) unsubscribe();
  unsubscribers = [];
});

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: false,
    store: createMemoryStore({ now: () => NOW }),
    ...overrides,
  });
  const deliver = async (envelope: TestEnvelope, headers: Record<string, string> = {}) => {
    const signed = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers: { ...signed.headers, ...headers }, body: signed.body });
  };
  return { receiver, deliver };
}

describe.runIf(diagnostics)('tracing channels', () => {
  it('traces a delivery: start with what is known before verifying, asyncEnd with the answer and the event', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.released', async function saveRelease() {});
    const seen = record('receive');
    const [event] = testStream(['kyb.data_request.released']);
    const result = await deliver(await signer.withAttestation(event!), { 'service-delivery-attempt': '3' });
    expect(result.status).toBe(200);
    expect(seen).toEqual([
      ['receive', 'start', { method: 'POST', deliveryAttempt: 3 }],
      ['receive', 'end', { method: 'POST', deliveryAttempt: 3 }],
      ['receive', 'asyncStart', expect.anything()],
      [
        'receive',
        'asyncEnd',
        {
          method: 'POST',
          deliveryAttempt: 3,
          status: 200,
          eventId: event!.event_id,
          eventType: 'kyb.data_request.released',
          streamId: event!.stream_id,
          seq: event!.seq,
          apiVersion: event!.api_version,
          signedAt: NOW / 1000,
        },
      ],
    ]);
  });

  it('names no event for a delivery that failed verification, only the answer', async () => {
    const { receiver } = setup();
    const seen = record('receive');
    const [event] = testStream(['kyb.data_request.pending_approval']);
    const { headers, body } = await signer.sign(event!);
    const forged = new TextEncoder().encode(new TextDecoder().decode(body).replace('pending', 'pendinG'));
    expect((await receiver.receive({ method: 'POST', headers, body: forged })).status).toBe(401);
    expect(seen.at(-1)).toEqual([
      'receive',
      'asyncEnd',
      { method: 'POST', deliveryAttempt: 1, status: 401, code: 'signature_mismatch' },
    ]);
  });

  it('traces each handler, synchronous (start, end) or not (asyncEnd), and a failure on error', async () => {
    const { receiver, deliver } = setup();
    receiver
      .on('kyb.data_request.pending_approval', function notify() {})
      .on('kyb.data_request.pending_approval', async function audit() {
        throw new Error('audit is down');
      });
    const seen = record('handler');
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliver(event!)).status).toBe(500);
    const base = { eventId: event!.event_id, eventType: 'kyb.data_request.pending_approval' };
    const phases = (handler: string) =>
      seen.filter(([, , trace]) => (trace as unknown as HandlerTrace).handler === handler).map(([, phase]) => phase);
    expect(phases('notify')).toEqual(['start', 'end']);
    expect(phases('audit')).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    const failed = seen.find(([, phase]) => phase === 'error')![2] as unknown as HandlerTrace;
    expect(failed).toMatchObject({ ...base, handler: 'audit' });
    expect((failed.error as Error).message).toBe('audit is down');
  });

  it('traces a synchronous handler that throws: start, error with what it threw, then end', async () => {
    const { receiver, deliver } = setup();
    const broke = new Error('notify broke');
    receiver.on('kyb.data_request.pending_approval', function notify() {
      throw broke;
    });
    const seen = record('handler');
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliver(event!)).status).toBe(500);
    expect(seen.map(([, phase]) => phase)).toEqual(['start', 'error', 'end']);
    const trace = { eventId: event!.event_id, eventType: 'kyb.data_request.pending_approval', handler: 'notify' };
    expect(seen[0]![2]).toEqual(trace);
    expect(seen[1]![2]).toEqual({ ...trace, error: broke });
    expect(seen[2]![2]).toEqual({ ...trace, error: broke });
  });

  it.each(['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const)(
    'publishes to a subscriber of the %s channel alone (an exporter that listens to one phase only)',
    async (phase) => {
      const { receiver, deliver } = setup();
      receiver.on('kyb.data_request.pending_approval', async function audit() {
        throw new Error('audit is down');
      });
      const channel = diagnostics!.channel(`tracing:${TRACING_CHANNELS.handler}:${phase}`);
      const seen: HandlerTrace[] = [];
      const onMessage = (message: unknown) => void seen.push({ ...(message as HandlerTrace) });
      channel.subscribe(onMessage);
      unsubscribers.push(() => channel.unsubscribe(onMessage));
      const [event] = testStream(['kyb.data_request.pending_approval']);
      expect((await deliver(event!)).status).toBe(500);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ eventId: event!.event_id, handler: 'audit' });
    },
  );

  it('traces the store calls of a delivery with the operation and the event key', async () => {
    const { deliver } = setup();
    const seen = record('store');
    const [event] = testStream(['kyb.data_request.pending_approval']);
    await deliver(event!);
    // The memory store answers synchronously: start and end only, as Node's traceSync.
    expect(seen.map(([, phase, trace]) => [phase, (trace as unknown as StoreTrace).operation])).toEqual([
      ['start', 'claim'],
      ['end', 'claim'],
      ['start', 'complete'],
      ['end', 'complete'],
    ]);
    expect(seen.every(([, , trace]) => trace.subject === event!.event_id)).toBe(true);
  });

  it('traces a store that rejects with the error, and the delivery still answers 503', async () => {
    const down = new Error('connection refused');
    const store: DedupeStore = {
      claim: () => Promise.reject(down),
      complete: () => Promise.resolve(true),
      release: () => Promise.resolve(true),
    };
    const { deliver } = setup({ store });
    const seen = record('store');
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliver(event!)).status).toBe(503);
    expect(seen.map(([, phase]) => phase)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(seen.at(-1)![2]).toMatchObject({ operation: 'claim', subject: event!.event_id, error: down });
  });

  it('publishes no secret, body or token, whatever the channel', async () => {
    const { receiver, deliver } = setup();
    receiver.onAny(async () => {});
    const seen = record('receive', 'handler', 'store');
    const [released] = testStream(['kyb.data_request.released']);
    const attested = await signer.withAttestation(released!);
    await deliver(attested);
    const published = JSON.stringify(seen);
    expect(published).not.toContain(SECRET);
    expect(published).not.toContain(attested.attestation!.slice(0, 40));
    expect(published).not.toContain('Jane Doe');
    expect(published).not.toContain('"data"');
  });

  it('queue mode: traces each job run, around its store calls and handlers, with the outcome', async () => {
    const queue = createMemoryQueue({ retryDelayMs: 0, now: () => NOW });
    const { receiver, deliver } = setup({ queue });
    let failures = 1;
    receiver.onAny(async function audit() {
      if (failures-- > 0) throw new Error('audit is down');
    });
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliver(event!)).code).toBe('queued');
    const seen = record('job', 'handler', 'store');
    const worker = createQueueWorker(receiver);
    await worker.start();
    for (let waited = 0; queue.backlog() > 0 && waited < 5_000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await worker.stop();
    const job = {
      jobId: expect.any(String),
      queue: 'memory queue',
      eventId: event!.event_id,
      eventType: 'kyb.data_request.pending_approval',
      streamId: event!.stream_id,
      seq: event!.seq,
      enqueuedAt: NOW,
    };
    const runs = seen.filter(([name, phase]) => name === 'job' && phase === 'asyncEnd').map(([, , trace]) => trace);
    expect(runs).toEqual([
      {
        ...job,
        attempt: 1,
        status: 500,
        code: 'handler_failed',
        error: expect.objectContaining({ code: 'handler_failed' }),
      },
      { ...job, attempt: 2, status: 200 },
    ]);
    // Nested: each run's start comes before its store calls and handler, its end after them.
    const names = seen
      .filter(([, phase]) => phase === 'start' || phase === 'asyncEnd')
      .map(([name, phase]) => `${name}:${phase}`);
    expect(names.slice(0, 2)).toEqual(['job:start', 'store:start']);
    expect(names.indexOf('job:asyncEnd')).toBeGreaterThan(names.indexOf('handler:asyncEnd'));
    // The receiver has no telemetry option: no carrier was injected, so none is published.
    expect(runs.every((trace) => !('carrier' in trace))).toBe(true);
  });

  it('traces a JWKS fetch with the URL shown without its query, the status and the key count', async () => {
    const url = 'https://kyb.example.com/.well-known/kyb-jwks.json';
    const fetched: string[] = [];
    const { deliver } = setup({
      attestation: {
        issuer: signer.issuer,
        audience: signer.audience,
        jwksUrl: `${url}?key=do-not-publish`,
        fetch: async (input) => {
          fetched.push(String(input));
          return new Response(JSON.stringify(signer.jwks), { status: 200 });
        },
      },
    });
    const seen = record('jwks');
    const [event] = testStream(['kyb.data_request.released']);
    expect((await deliver(await signer.withAttestation(event!))).status).toBe(200);
    expect(fetched).toHaveLength(1);
    expect(seen.map(([, phase]) => phase)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(seen[0]![2]).toEqual({ url });
    expect(seen.at(-1)![2]).toEqual({ url, status: 200, keys: signer.jwks.keys.length });
  });

  it('traces a backfill under enforce: the gap it fills, how many seqs it settled', async () => {
    const events = testStream([
      'kyb.data_request.pending_approval',
      'kyb.data_request.pending_approval',
      'kyb.data_request.pending_approval',
    ]);
    const { deliver } = setup({
      ordering: streamOrdering({
        mode: 'enforce',
        fetchEventsAfter: async function* (streamId, afterSeq) {
          for (const event of events) if (event.stream_id === streamId && event.seq > afterSeq) yield event;
        },
      }),
    });
    await deliver(events[0]!);
    const seen = record('backfill');
    expect((await deliver(events[2]!)).status).toBe(200);
    expect(seen.at(-1)).toEqual([
      'backfill',
      'asyncEnd',
      {
        streamId: events[0]!.stream_id,
        eventType: 'kyb.data_request.pending_approval',
        seq: events[2]!.seq,
        fromSeq: events[1]!.seq,
        filled: 1,
      },
    ]);
  });

  it('publishes to a subscriber of any one phase alone', async () => {
    // The receiver looks at each of the five channels before it makes a trace: a subscriber of asyncEnd (or of error)
    // alone must still get its messages.
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.pending_approval', () => {
      throw new Error('handler failed');
    });
    const heard: string[] = [];
    for (const [name, phase] of [
      ['receive', 'start'],
      ['receive', 'end'],
      ['receive', 'asyncStart'],
      ['receive', 'asyncEnd'],
      ['handler', 'error'],
    ] as const) {
      const channel = diagnostics!.channel(`tracing:${TRACING_CHANNELS[name]}:${phase}`);
      const onMessage = () => void heard.push(`${name}:${phase}`);
      channel.subscribe(onMessage);
      const answer = await deliver(testStream(['kyb.data_request.pending_approval'])[0]!);
      channel.unsubscribe(onMessage);
      expect(answer.status).toBe(500);
    }
    expect(heard).toEqual(['receive:start', 'receive:end', 'receive:asyncStart', 'receive:asyncEnd', 'handler:error']);
  });

  it('publishes nothing once unsubscribed', async () => {
    const { deliver } = setup();
    const seen = record('receive', 'store');
    for (const unsubscribe of unsubscribers) unsubscribe();
    unsubscribers = [];
    await deliver(testStream(['kyb.data_request.pending_approval'])[0]!);
    expect(seen).toEqual([]);
  });
});

describe.skipIf(diagnostics)('without diagnostics_channel (workerd without nodejs_compat)', () => {
  it('answers as anywhere else, with nothing to publish to', async () => {
    const { receiver, deliver } = setup();
    const ran: string[] = [];
    receiver.onAny((event) => void ran.push(event.event_id));
    const [event] = testStream(['kyb.data_request.pending_approval']);
    expect((await deliver(event!)).status).toBe(200);
    expect(ran).toEqual([event!.event_id]);
  });
});
