import { createMemoryStore } from '@kyb-webhooks/core/store';
import { runStoreConformance } from './index.js';

// The reference store passes the same suite as the durable ones, which keeps the suite honest about the contract.
runStoreConformance('memory store (injected clock)', async () => {
  let now = Date.now();
  return {
    store: createMemoryStore({ now: () => now }),
    advanceTimeMs: (ms) => {
      now += ms;
    },
    cleanup() {},
  };
});

runStoreConformance('memory store (real clock)', async () => ({ store: createMemoryStore(), cleanup() {} }));
