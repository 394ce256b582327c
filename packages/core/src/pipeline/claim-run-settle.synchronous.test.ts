// A delivery nothing makes wait (an HMAC-only event checked by node:crypto, a store that answers with values, at
// most one handler, which returns at once) is claimed, handled, recorded and logged within the receive() call
// itself: no promise, microtask or timer on the way (docs/architecture.md §3.2, §3.7 and §7.1). A change that awaits
// a value that is not a promise still answers the same, a microtask later per step; these tests see the step that
// is not done yet when receive() hands back its promise.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import type { LogEntry } from '../log/logger.js';
import { createMemoryStore } from '../store/memory-store.js';
import { platformCrypto as nodeCrypto } from '../verify/crypto/node.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 24, 10, 0, 0);
const SECRET = 'synchronous-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

async function setup(handlerCount: 0 | 1) {
  const logs: LogEntry[] = [];
  const store = createMemoryStore({ now: () => NOW });
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    crypto: nodeCrypto,
    store,
    logger: (entry) => logs.push(entry),
  });
  const ran: string[] = [];
  if (handlerCount === 1) receiver.onAny((event) => void ran.push(event.event_id));
  // The secret is imported once, asynchronously, on the first delivery; the ones after it are checked at once.
  const warmUp = await signer.sign(testEvents.dataRequestPendingApproval());
  await receiver.receive({ method: 'POST', headers: warmUp.headers, body: warmUp.body });
  logs.length = 0;
  ran.length = 0;
  return { receiver, store, logs, ran };
}

describe('a delivery nothing makes wait', () => {
  it('with one handler: has run it, recorded the event and logged it when receive() returns', async () => {
    const { receiver, store, logs, ran } = await setup(1);
    const event = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(event);
    const answer = receiver.receive({ method: 'POST', headers, body });
    expect(ran).toEqual([event.event_id]);
    expect(store.claim(event.event_id, { leaseMs: 1_000 })).toEqual({ status: 'completed' });
    expect(logs.map((entry) => entry.message)).toEqual(['delivery processed']);
    expect((await answer).status).toBe(200);
  });

  it('with no handler: has recorded the event and logged it when receive() returns', async () => {
    const { receiver, store, logs } = await setup(0);
    const event = testEvents.dataRequestPendingApproval();
    const { headers, body } = await signer.sign(event);
    const answer = receiver.receive({ method: 'POST', headers, body });
    expect(store.claim(event.event_id, { leaseMs: 1_000 })).toEqual({ status: 'completed' });
    expect(logs.map((entry) => entry.message)).toEqual(['delivery processed']);
    expect((await answer).status).toBe(200);
  });
});
