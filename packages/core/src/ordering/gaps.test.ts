// A stream stalled at an event the API can never serve verifiably (gaps.ts, settleUnfillable): the exact error line
// an operator reads, the answer's detail, what onUnfillable's answers lead to, and each way recording a skip can fail.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { GapReport, OrderingOptions } from './types.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import { streamOrdering } from './stream-ordering.js';

const NOW = Date.UTC(2026, 10, 27, 6, 0, 0);
const SECRET = 'gaps-secret';
const WHY =
  'the API serves it without its attestation, as it does once a release was purged (410 payload_expired) (attestation_missing)';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** A memory store whose skipSeq a test replaces. */
function storeWithSkip(skipSeq: StreamCursorStore['skipSeq']): StreamCursorStore {
  return Object.assign(Object.create(createMemoryStore({ now: () => NOW })) as StreamCursorStore, { skipSeq });
}

/** seq 0 delivered, seq 1 a release the API serves purged, seq 2 delivered: the stream stalls at seq 1. */
async function stalled(
  options: {
    ordering?: Partial<OrderingOptions>;
    overrides?: Partial<ReceiverOptions>;
    store?: StreamCursorStore;
  } = {},
) {
  const events = await Promise.all(
    testStream([
      'kyb.data_request.pending_approval',
      'kyb.data_request.released',
      'kyb.data_request.pending_approval',
    ]).map((event) => signer.withAttestation(event)),
  );
  const api = [events[0]!, { ...events[1]!, attestation: undefined }];
  const logs: LogEntry[] = [];
  const gaps: GapReport[] = [];
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: (entry) => logs.push(entry),
    store: options.store ?? createMemoryStore({ now: () => NOW }),
    ordering: streamOrdering({
      mode: 'enforce',
      fetchEventsAfter: async function* (_streamId, afterSeq) {
        for (const event of api) if (event.seq > afterSeq) yield structuredClone(event);
      },
      ...options.ordering,
    }),
    ...options.overrides,
  });
  receiver.onGap((report) => {
    gaps.push(report);
  });
  const deliver = async (envelope: TestEnvelope) => {
    const answer = await receiver.receive({ method: 'POST', ...(await signer.sign(envelope)) });
    return { status: answer.status, code: answer.code };
  };
  await deliver(events[0]!);
  const answer = await deliver(events[2]!);
  return { events, answer, logs, gaps };
}

const rejectedDetail = (logs: LogEntry[], code: string) =>
  logs.filter((entry) => entry.message === `delivery rejected: ${code}`).map((entry) => entry.detail);
const hookLines = (logs: LogEntry[]) =>
  logs
    .filter((entry) => entry.message.startsWith('ordering.onUnfillable'))
    .map(({ level, code, message }) => ({ level, code, message }));

describe('a stream stalled for good', () => {
  it('logs one error line that says where, why, that it will not end by itself, and the way out', async () => {
    const { events, answer, logs } = await stalled();
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(
      logs
        .filter((entry) => entry.code === 'stream_unfillable')
        .map(({ level, message, eventId }) => ({ level, message, eventId })),
    ).toEqual([
      {
        level: 'error',
        message:
          `stream ${events[0]!.stream_id} is stalled for good at seq 1 (event ${events[1]!.event_id}): ${WHY}. ` +
          'The stall will not end by itself: every later event of the stream is answered 502 backfill_unfillable until ' +
          'that seq is skipped. Way out: check the event yourself (a purged release: client.release(requestId); a ' +
          "retired key: the service), then return { skip: '<why, who decided>' } from ordering.onUnfillable, which " +
          "records the skip in the store; see the README's Ordering section. Logged once per stream and seq in this process",
        eventId: events[2]!.event_id,
      },
    ]);
  });

  it('answers 502 backfill_unfillable with a detail that names the seq, the event and why', async () => {
    const { events, logs } = await stalled();
    expect(rejectedDetail(logs, 'backfill_unfillable')).toEqual([
      `seq 1 (event ${events[1]!.event_id}) can never be fetched verifiably: ${WHY}; the stall lasts until ordering.onUnfillable skips it`,
    ]);
  });
});

describe('onUnfillable’s answers', () => {
  it('null: the stream waits, and the log says what to answer', async () => {
    const { answer, logs } = await stalled({ ordering: { onUnfillable: () => null as unknown as 'wait' } });
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(hookLines(logs)).toEqual([
      {
        level: 'error',
        code: 'stream_unfillable',
        message:
          "ordering.onUnfillable must answer 'wait' or { skip: '<why, who decided>' } with a reason of 1 to 500 characters, which is recorded; the stream waits",
      },
    ]);
  });

  it('no answer within handlerTimeoutMs: the stream waits, logged at error', async () => {
    const { answer, logs } = await stalled({
      ordering: { onUnfillable: () => new Promise<never>(() => {}) },
      overrides: { handlerTimeoutMs: 20 },
    });
    expect(answer).toEqual({ status: 502, code: 'backfill_unfillable' });
    expect(hookLines(logs)).toEqual([
      {
        level: 'error',
        code: 'stream_unfillable',
        message: 'ordering.onUnfillable did not answer within handlerTimeoutMs; the stream waits',
      },
    ]);
  });
});

describe('recording a skip', () => {
  const skip: Partial<OrderingOptions> = { onUnfillable: () => ({ skip: 'purged, checked by ops' }) };

  it('refused by the store (the cursor moved meanwhile): 409 in_progress, the log says the retry reads it again', async () => {
    const { events, answer, logs } = await stalled({ ordering: skip, store: storeWithSkip(async () => false) });
    expect(answer).toEqual({ status: 409, code: 'in_progress' });
    expect(rejectedDetail(logs, 'in_progress')).toEqual([
      `the stream cursor moved while onUnfillable decided to skip seq 1 (event ${events[1]!.event_id}); the retry reads it again`,
    ]);
  });

  it('that fails: 503 store_unavailable, naming skipSeq', async () => {
    const { answer, logs } = await stalled({
      ordering: skip,
      store: storeWithSkip(() => Promise.reject(new Error('connection reset'))),
    });
    expect(answer).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual(['skipSeq failed']);
  });

  it('that does not settle within storeTimeoutMs: 503 store_unavailable, naming skipSeq', async () => {
    const { answer, logs } = await stalled({
      ordering: skip,
      overrides: { storeTimeoutMs: 20 },
      store: storeWithSkip(() => new Promise<never>(() => {})),
    });
    expect(answer).toEqual({ status: 503, code: 'store_unavailable' });
    expect(rejectedDetail(logs, 'store_unavailable')).toEqual([
      "the store's skipSeq() did not settle within storeTimeoutMs (20 ms)",
    ]);
  });
});
