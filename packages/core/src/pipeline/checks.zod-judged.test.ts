// The checks accept a genuine delivery by the schemas' generated plans, without zod; everything else waits for zod
// (events/lazy-validation.ts): a value zod refuses, whose issues the refusal names, and a value only zod can judge,
// such as an own "__proto__" key (JSON.parse makes one; zod's copy leaves it out). These tests drive those paths
// through the receiver, for a delivery and for an event fetched from the API (receiver.replay), and check what a user
// sees: the answer, the log line, what the handler gets, and that nothing reached the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { ClaimOptions, DedupeStore } from '../store/dedupe.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createReceiver } from '../receiver.js';
import type { HandlerContext } from './dispatch.js';

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
const SECRET = 'zod-judged-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

interface Seen {
  event: { event_id: string; event: string; seq: number; data: Record<string, unknown> };
  context: HandlerContext;
}

function setup() {
  const logs: LogEntry[] = [];
  const memory = createMemoryStore({ now: () => NOW });
  const claimed: string[] = [];
  const store: DedupeStore = {
    claim: (key: string, options: ClaimOptions) => {
      claimed.push(key);
      return memory.claim(key, options);
    },
    complete: (key, token, options) => memory.complete(key, token, options),
    release: (key, token) => memory.release(key, token),
  };
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    store,
    logger: (entry) => logs.push(entry),
  });
  const seen: Seen[] = [];
  receiver.onAny((event, context) => {
    seen.push({ event: event as Seen['event'], context });
  });
  /** Delivers exactly these bytes, correctly signed: only the JSON they hold can be at fault. */
  const deliverText = (text: string) => {
    const { headers, body } = signer.signBytes(text);
    return receiver.receive({ method: 'POST', headers, body });
  };
  const deliver = (envelope: TestEnvelope) => deliverText(JSON.stringify(envelope));
  return { receiver, logs, claimed, seen, deliver, deliverText };
}

/** The JSON of `value` with an own "__proto__" key first in the object that starts with `{"<firstKey>"`. */
function withOwnProto(json: string, firstKey: string): string {
  const marker = `{"${firstKey}"`;
  expect(json).toContain(marker);
  return json.replace(marker, `{"__proto__":{"polluted":true},"${firstKey}"`);
}

/** The warn or error line the receiver logged for a refused delivery. */
function refusalLog(logs: LogEntry[]): LogEntry | undefined {
  return logs.find((entry) => entry.message.startsWith('delivery rejected'));
}

// Whatever the tests sent, no object may have gained a "polluted" property through Object.prototype.
afterAll(() => {
  expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
});

describe('a delivery whose envelope zod refuses', () => {
  it('is answered 400 envelope_invalid, logged with each field and its issue, and never claimed', async () => {
    const { logs, claimed, seen, deliver } = setup();
    const envelope = testEvents.dataRequestRefused({ seq: -1, stream_id: '' });
    const answer = await deliver(envelope);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 400, code: 'envelope_invalid' });
    expect(refusalLog(logs)).toMatchObject({
      level: 'warn',
      message: 'delivery rejected: envelope_invalid',
      detail: 'stream_id: too_small; seq: too_small',
    });
    expect({ claimed, handled: seen.length }).toEqual({ claimed: [], handled: 0 });
  });
});

describe('a delivery whose event data zod refuses', () => {
  it('is answered 422 event_data_invalid, logged with the full path of the field and the event it belongs to', async () => {
    const { logs, claimed, seen, deliver } = setup();
    const envelope = testEvents.dataRequestPendingApproval();
    const price = envelope.data.price as { lines: { cents: number }[] };
    price.lines[0]!.cents = 1.5;
    const answer = await deliver(envelope);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 422, code: 'event_data_invalid' });
    expect(refusalLog(logs)).toMatchObject({
      level: 'warn',
      message: 'delivery rejected: event_data_invalid',
      detail: 'price.lines.0.cents: invalid_type',
      eventId: envelope.event_id,
      eventType: 'kyb.data_request.pending_approval',
    });
    expect({ claimed, handled: seen.length }).toEqual({ claimed: [], handled: 0 });
  });
});

describe('a delivery only zod can judge (an own "__proto__" key)', () => {
  it('in the envelope: is processed, and the handler gets the envelope without that key', async () => {
    const { claimed, seen, deliverText } = setup();
    const envelope = testEvents.dataRequestRefused({ data: { reason: 'declined' } });
    const answer = await deliverText(withOwnProto(JSON.stringify(envelope), 'event'));
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    expect(claimed).toEqual([envelope.event_id]);
    const event = seen[0]?.event;
    expect(event).toMatchObject({ event_id: envelope.event_id, seq: envelope.seq, data: { reason: 'declined' } });
    expect(Object.hasOwn(event!, '__proto__')).toBe(false);
  });

  it('in the event data: is processed, and the handler gets the data without that key, every other field kept', async () => {
    const { seen, deliverText } = setup();
    const envelope = testEvents.dataRequestRefused({ data: { reason: 'declined' } });
    const answer = await deliverText(withOwnProto(JSON.stringify(envelope), 'request_id'));
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    const event = seen[0]?.event;
    expect(event?.data).toEqual({ request_id: envelope.data.request_id, reason: 'declined' });
    expect(Object.hasOwn(event!.data, '__proto__')).toBe(false);
    // The rest of the envelope is the delivery's own.
    expect(event).toMatchObject({ event_id: envelope.event_id, stream_id: envelope.stream_id, seq: envelope.seq });
    // What receive() answers carries the same checked event.
    expect(Object.hasOwn((answer.event as Seen['event']).data, '__proto__')).toBe(false);
  });
});

describe('a release whose answers need zod’s copy (an entry with an own "__proto__" key)', () => {
  const ANSWER = { name: 'company_name', subject_type: 'business', subject: '0x6f1e', value: 'Acme GmbH' };
  const oddAnswers = () => JSON.parse(withOwnProto(JSON.stringify([ANSWER]), 'name')) as never[];

  it('gives the handler those answers, without that key', async () => {
    const { seen, deliver } = setup();
    const released = await signer.withAttestation(testEvents.dataRequestReleased(), { answers: oddAnswers() });
    const answer = await deliver(released);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    const answers = [...(seen[0]!.context as HandlerContext<'kyb.data_request.released'>).answers];
    expect(answers).toEqual([ANSWER]);
    expect(Object.hasOwn(answers[0]!, '__proto__')).toBe(false);
  });

  it('fetched from the API: gives the handler those answers too', async () => {
    const { receiver, seen } = setup();
    const released = await signer.withAttestation(testEvents.dataRequestReleased(), { answers: oddAnswers() });
    const answer = await receiver.replay(JSON.parse(JSON.stringify(released)));
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    const answers = [...(seen[0]!.context as HandlerContext<'kyb.data_request.released'>).answers];
    expect(answers).toEqual([ANSWER]);
    expect(seen[0]!.context.authentication).toEqual({ hmac: null, attestation: true, fetched: true });
  });
});

describe('an event fetched from the API (receiver.replay) that zod must judge', () => {
  it('with an envelope zod refuses: answered 400 envelope_invalid, logged with each field and its issue', async () => {
    const { receiver, logs, claimed, seen } = setup();
    const answer = await receiver.replay({ ...testEvents.dataRequestRefused(), seq: 1.5, api_version: '2026-1-1' });
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 400, code: 'envelope_invalid' });
    expect(refusalLog(logs)).toMatchObject({ level: 'warn', detail: 'seq: invalid_type; api_version: invalid_format' });
    expect({ claimed, handled: seen.length }).toEqual({ claimed: [], handled: 0 });
  });

  it('with event data zod refuses: answered 422 event_data_invalid, logged with the field', async () => {
    const { receiver, logs, claimed, seen } = setup();
    const answer = await receiver.replay({ ...testEvents.dataRequestRefused(), data: { reason: '' } });
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 422, code: 'event_data_invalid' });
    expect(refusalLog(logs)).toMatchObject({ level: 'warn', detail: 'reason: too_small' });
    expect({ claimed, handled: seen.length }).toEqual({ claimed: [], handled: 0 });
  });

  it('with an own "__proto__" key in its envelope and its data: processed, the handler gets neither key', async () => {
    const { receiver, seen } = setup();
    const envelope = testEvents.dataRequestRefused({ data: { reason: 'declined' } });
    const raw: unknown = JSON.parse(withOwnProto(withOwnProto(JSON.stringify(envelope), 'event'), 'request_id'));
    const answer = await receiver.replay(raw);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    const event = seen[0]!.event;
    expect(event.data).toEqual({ request_id: envelope.data.request_id, reason: 'declined' });
    expect([Object.hasOwn(event, '__proto__'), Object.hasOwn(event.data, '__proto__')]).toEqual([false, false]);
    expect(seen[0]!.context.authentication).toEqual({ hmac: null, attestation: false, fetched: true });
  });
});
