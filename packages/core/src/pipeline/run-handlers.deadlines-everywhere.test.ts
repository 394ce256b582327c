// handlerTimeoutMs holds on every path a handler runs on, not only the unordered one: onUnauthenticated handlers of an
// attestation-only receiver, and on/onAny handlers with ordering on (where a late outcome still settles the claim).
// Also what onError learns about a timeout, and which handlers run for known and unknown types with ordering on.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import type { HandlerError } from './dispatch.js';
import { createReceiver, type ReceiverOptions } from '../receiver.js';
import { streamOrdering } from '../ordering/stream-ordering.js';

const NOW = Date.UTC(2026, 10, 23, 8, 0, 0);
const SECRET = 'deadline-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ordered = streamOrdering({ mode: 'enforce', fetchEventsAfter: async function* () {} });

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
    logger: false,
    handlerTimeoutMs: 50,
    ...overrides,
  });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope);
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver };
}

describe('an onUnauthenticated handler', () => {
  it('that never settles is answered 503 handler_timeout within handlerTimeoutMs', async () => {
    const receiver = createReceiver({
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: false,
      handlerTimeoutMs: 50,
    });
    receiver.onUnauthenticated(() => new Promise(() => {}));
    const { headers, body } = await signer.sign(testEvents.dataRequestPendingApproval(), { attest: false });
    delete headers['service-kyb-signature'];
    const answer = await receiver.receive({ method: 'POST', headers, body });
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'handler_timeout' });
  });
});

describe('with ordering on, a handler past handlerTimeoutMs', () => {
  it('is answered 503 handler_timeout', async () => {
    const [event] = testStream(1);
    const { receiver, deliver } = setup({ ordering: ordered });
    receiver.onAny(() => new Promise(() => {}));
    const answer = await deliver(event!);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 503, code: 'handler_timeout' });
  });

  it('that succeeds later has its success recorded: the redelivery is a duplicate', async () => {
    const [event] = testStream(1);
    const { receiver, deliver } = setup({ ordering: ordered });
    const handler = vi.fn(() => sleep(150));
    receiver.onAny(handler);
    expect((await deliver(event!)).code).toBe('handler_timeout');
    await sleep(300);
    expect((await deliver(event!)).code).toBe('duplicate');
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('that fails later frees the claim: the redelivery runs the handler again', async () => {
    const [event] = testStream(1);
    const { receiver, deliver } = setup({ ordering: ordered });
    let calls = 0;
    receiver.onAny(async () => {
      calls += 1;
      if (calls === 1) {
        await sleep(150);
        throw new Error('failed late');
      }
    });
    expect((await deliver(event!)).code).toBe('handler_timeout');
    await sleep(300);
    const answer = await deliver(event!);
    expect({ status: answer.status, calls }).toEqual({ status: 200, calls: 2 });
  });
});

describe('onError learns why a handler timed out', () => {
  it('gets a HandlerError carrying the TimeoutError, which names handlerTimeoutMs', async () => {
    const { receiver, deliver } = setup();
    const errors: HandlerError[] = [];
    receiver
      .onAny(() => new Promise(() => {}))
      .onError((error) => {
        errors.push(error);
      });
    await deliver(testEvents.dataRequestPendingApproval());
    const cause = errors[0]?.errors[0] as DOMException | undefined;
    expect({ name: cause?.name, message: cause?.message }).toEqual({
      name: 'TimeoutError',
      message: 'the handler did not finish within handlerTimeoutMs (50 ms)',
    });
  });
});

describe('with ordering on, handlers for known and unknown types', () => {
  it('runs the typed handler, and not onUnknown, for a known type', async () => {
    const [event] = testStream(1);
    const { receiver, deliver } = setup({ ordering: ordered });
    const typed = vi.fn();
    const unknown = vi.fn();
    receiver.on('kyb.data_request.pending_approval', typed).onUnknown(unknown);
    expect((await deliver(event!)).status).toBe(200);
    expect({ typed: typed.mock.calls.length, unknown: unknown.mock.calls.length }).toEqual({ typed: 1, unknown: 0 });
  });

  it('runs onUnknown for a type this version does not know', async () => {
    const [event] = testStream(1);
    const { receiver, deliver } = setup({ ordering: ordered });
    const unknown = vi.fn();
    receiver.onUnknown(unknown);
    expect((await deliver({ ...event!, event: 'kyb.brand_new.thing' } as TestEnvelope)).status).toBe(200);
    expect(unknown).toHaveBeenCalledTimes(1);
  });
});
