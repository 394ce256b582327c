import { createMemoryQueue } from '@kyb-webhooks/core/queue';
import { runQueueConformance } from './index.js';

// The reference engine passes the same suite as the durable ones, which keeps the suite honest about the contract.
runQueueConformance('memory queue', async ({ retryLimit }) => ({
  queue: createMemoryQueue({ retryLimit, retryDelayMs: 1 }),
  cleanup() {},
}));
