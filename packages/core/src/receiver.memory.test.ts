/**
 * Memory, in bytes of heap after full collections (issue 28 §3; V8 on Node and Deno, JavaScriptCore on Bun): what a receiver holds per delivery in flight, and
 * that the memory store stays within its cap however many unique ids arrive. The bounds are the ones the core README
 * documents (“Memory”), with room for what V8's collections and Map growth move between runs (measured: about 3 KB
 * per delivery in flight, 80 to 190 bytes per store record).
 */
import { describe, expect, it } from 'vitest';
import { heapAfterCollection } from '../test-heap.js';
import { createTestSigner, testEvents } from '../test-kit.js';
import { createReceiver } from './receiver.js';
import { createMemoryStore } from './store/memory-store.js';

/** Documented: a delivery in flight (verified, claimed, its handler running) holds at most this, besides its body. */
const IN_FLIGHT_BYTES = 8 * 1024;
/** Documented: a record of the memory store costs at most this. */
const RECORD_BYTES = 512;

describe('memory', () => {
  it(`holds at most ${IN_FLIGHT_BYTES} bytes per delivery in flight, 1,000 at once, and answers each once released`, async () => {
    const NOW = Date.now();
    const signer = await createTestSigner({ now: NOW });
    const receiver = createReceiver({ secrets: signer.secrets, now: () => NOW, logger: false });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    receiver.on('kyb.data_request.refused', async () => {
      running++;
      await gate;
    });
    const deliveries = await Promise.all(
      Array.from({ length: 1_000 }, () => signer.sign(testEvents.dataRequestRefused())),
    );
    const before = heapAfterCollection();
    const answers = deliveries.map((delivery) =>
      receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body }),
    );
    await expect.poll(() => running).toBe(1_000);
    const perDelivery = (heapAfterCollection() - before) / 1_000;
    expect(perDelivery).toBeGreaterThan(0); // the measurement sees what is held
    expect(perDelivery).toBeLessThanOrEqual(IN_FLIGHT_BYTES);
    release();
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual(Array(1_000).fill(200));
  });

  it(`keeps the memory store within maxEntries × ${RECORD_BYTES} bytes under a flood of unique ids`, () => {
    const maxEntries = 20_000;
    const before = heapAfterCollection();
    const store = createMemoryStore({ maxEntries });
    for (let i = 0; i < 10 * maxEntries; i++) {
      const id = `01JD2Z3K4M5N6P7Q8R${String(i).padStart(8, '0')}`;
      const claim = store.claim(id, { leaseMs: 60_000 });
      if ('status' in claim && claim.status === 'acquired') store.complete(id, claim.token, { retainMs: 86_400_000 });
    }
    const held = heapAfterCollection() - before;
    expect(held).toBeLessThanOrEqual(maxEntries * RECORD_BYTES);
    // Still the store it was: the newest id is a duplicate, the first one long dropped.
    expect(store.claim(`01JD2Z3K4M5N6P7Q8R${String(10 * maxEntries - 1).padStart(8, '0')}`, { leaseMs: 1 })).toEqual({
      status: 'completed',
    });
    expect(store.claim('01JD2Z3K4M5N6P7Q8R00000000', { leaseMs: 1 })).toMatchObject({ status: 'acquired' });
  });
});
