// How the core finds diagnostics_channel: through process.getBuiltinModule, once. Each test loads a fresh copy of the
// core with that lookup replaced, as a runtime without the module, with a stand-in that has no channel(), or with a
// lookup that throws would have it: the receiver answers as anywhere else, its `telemetry` option still watches every
// operation, and the runtime is not asked again for each one.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import type { ReceiverTelemetry, TracedOperation } from './observers.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'channels-lookup-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

type Lookup = (id: string) => unknown;
const host = (globalThis as { process?: { getBuiltinModule?: Lookup } }).process;
const original = host?.getBuiltinModule;
afterEach(() => {
  if (host) host.getBuiltinModule = original;
  vi.resetModules();
});

/**
 * A fresh core on a runtime whose process.getBuiltinModule('diagnostics_channel') is `lookup`: two receivers (one with
 * a telemetry option, one without) each answer a delivery; what they answered, the operations the telemetry saw, and
 * how many times the core asked for the module.
 */
async function deliverOn(lookup: Lookup) {
  let asked = 0;
  host!.getBuiltinModule = (id) => {
    if (id !== 'diagnostics_channel') return original!.call(host, id);
    asked += 1;
    return lookup(id);
  };
  vi.resetModules();
  const { createReceiver } = await import('../receiver.js');
  const { createMemoryStore } = await import('../store/memory-store.js');
  const operations: TracedOperation[] = [];
  const telemetry: ReceiverTelemetry = {
    around(operation, _trace, run) {
      operations.push(operation);
      return run();
    },
  };
  const ran: string[] = [];
  const statuses: number[] = [];
  const events = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.pending_approval']);
  for (const [index, options] of [{ telemetry }, {}].entries()) {
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => NOW,
      logger: false,
      store: createMemoryStore({ now: () => NOW }),
      ...options,
    });
    receiver.onAny(async function audit(event) {
      ran.push(event.event_id);
    });
    const { headers, body } = await signer.sign(events[index]!);
    statuses.push((await receiver.receive({ method: 'POST', headers, body })).status);
  }
  expect(ran).toEqual(events.map((event) => event.event_id));
  return { statuses, operations, asked };
}

describe.runIf(original)('finding diagnostics_channel', () => {
  it('on a runtime without it: answers, the telemetry option watches everything, and asks once', async () => {
    const { statuses, operations, asked } = await deliverOn(() => undefined);
    expect(statuses).toEqual([200, 200]);
    expect(operations).toEqual(['receive', 'store', 'handler', 'store']);
    expect(asked).toBe(1);
  });

  it('takes a stand-in without channel() (a partial polyfill) for no module at all', async () => {
    const { statuses, operations, asked } = await deliverOn(() => ({}));
    expect(statuses).toEqual([200, 200]);
    expect(operations).toEqual(['receive', 'store', 'handler', 'store']);
    expect(asked).toBe(1);
  });

  it('takes a lookup that throws for no module at all, and does not ask again', async () => {
    const { statuses, operations, asked } = await deliverOn(() => {
      throw new Error('No such built-in module: diagnostics_channel');
    });
    expect(statuses).toEqual([200, 200]);
    expect(operations).toEqual(['receive', 'store', 'handler', 'store']);
    expect(asked).toBe(1);
  });
});
