import { runQueueConformance } from '@kyb-webhooks/testing/queue-suite';
import { testService } from '../../../scripts/services/env.js';
import { createBullMqQueue } from './index.js';
import { connect, dropPrefix, testNames } from './test-helpers.js';

const redis = testService('redis');

runQueueConformance(
  'BullMQ queue',
  async ({ retryLimit }) => {
    const client = connect(redis.url!);
    const other = connect(redis.url!); // a second connection: another process of the worker fleet
    const { name, prefix } = testNames();
    // Retries at once (retryDelayMs 0): the shortest delay BullMQ allows.
    const options = { name, prefix, retryLimit, retryDelayMs: 0 };
    const queue = createBullMqQueue({ connection: client, ...options });
    const peer = createBullMqQueue({ connection: other, ...options });
    return {
      queue,
      peer,
      async cleanup() {
        await queue.close();
        await peer.close();
        await dropPrefix(client, prefix);
        client.disconnect();
        other.disconnect();
      },
    };
  },
  { skip: redis.skipReason },
);
