// Which handlers a verified event runs, including handlers registered after deliveries already happened (the
// registry remembers each type's handler list, so registering must make it forget).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '3': 'dispatch-secret-v3' } });
});

function setup() {
  const receiver = createReceiver({
    secrets: { '3': 'dispatch-secret-v3' },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    now: () => NOW,
  });
  const deliver = async (envelope: TestEnvelope, attest?: boolean) => {
    const { headers, body } = await signer.sign(envelope, attest === undefined ? {} : { attest });
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver };
}

const unknownType = (): TestEnvelope => ({
  ...testEvents.dataRequestRefused(),
  event: 'kyb.business.sanctions_flagged',
  data: { level: 'high' },
});

describe('handler dispatch', () => {
  it("shares one context among a delivery's handlers: its own fields only, one signal, a new context per delivery", async () => {
    const { receiver, deliver } = setup();
    const seen: { keys: string[]; signal: AbortSignal; context: object }[] = [];
    const record = (_event: unknown, context: { signal: AbortSignal }) => {
      seen.push({ keys: Object.keys(context), signal: context.signal, context });
    };
    receiver.on('kyb.data_request.refused', record).onAny(record);
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect(seen.map(({ keys }) => keys)).toEqual(
      Array(4).fill(['authentication', 'claims', 'deliveryAttempt', 'apiVersion', 'answers', 'job']),
    );
    const [first, second, third] = seen;
    expect([first!.context === second!.context, first!.signal === second!.signal]).toEqual([true, true]);
    expect([first!.context === third!.context, first!.signal === third!.signal]).toEqual([false, false]);
    expect(first!.signal.aborted).toBe(false);
  });

  it('runs every handler registered for the same type', async () => {
    const { receiver, deliver } = setup();
    const first = vi.fn();
    const second = vi.fn();
    receiver.on('kyb.data_request.refused', first).on('kyb.data_request.refused', second);
    expect((await deliver(testEvents.dataRequestRefused())).status).toBe(200);
    expect([first.mock.calls.length, second.mock.calls.length]).toEqual([1, 1]);
  });

  it('runs only the handlers of the event type, and onAny', async () => {
    const { receiver, deliver } = setup();
    const refused = vi.fn();
    const pending = vi.fn();
    const any = vi.fn();
    receiver.on('kyb.data_request.refused', refused).on('kyb.data_request.pending_approval', pending).onAny(any);
    await deliver(testEvents.dataRequestRefused());
    expect([refused.mock.calls.length, pending.mock.calls.length, any.mock.calls.length]).toEqual([1, 0, 1]);
  });

  it.each<[string, (receiver: ReturnType<typeof createReceiver>, handler: () => void) => void]>([
    ['on() for that type', (receiver, handler) => receiver.on('kyb.data_request.refused', handler)],
    ['onAny()', (receiver, handler) => receiver.onAny(handler)],
  ])('runs a handler registered with %s after a delivery of a known type already happened', async (_case, register) => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => {});
    await deliver(testEvents.dataRequestRefused());
    const late = vi.fn();
    register(receiver, late);
    await deliver(testEvents.dataRequestRefused());
    expect(late).toHaveBeenCalledOnce();
  });

  it('runs onAny registered after a delivery of a known type without handlers', async () => {
    const { receiver, deliver } = setup();
    await deliver(testEvents.dataRequestPendingApproval());
    const late = vi.fn();
    receiver.onAny(late);
    await deliver(testEvents.dataRequestPendingApproval());
    expect(late).toHaveBeenCalledOnce();
  });

  it('runs onUnknown registered after a delivery of an unknown type', async () => {
    const { receiver, deliver } = setup();
    await deliver(unknownType(), true);
    const late = vi.fn();
    receiver.onUnknown(late);
    await deliver(unknownType(), true);
    expect(late).toHaveBeenCalledOnce();
  });

  it('runs onUnknown registered after a delivery of an unknown type that has an on() handler', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.business.sanctions_flagged' as never, () => {});
    await deliver(unknownType(), true);
    const late = vi.fn();
    receiver.onUnknown(late);
    await deliver(unknownType(), true);
    expect(late).toHaveBeenCalledOnce();
  });
});
