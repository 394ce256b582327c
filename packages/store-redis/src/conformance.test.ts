import { runStoreConformance } from '@kyb-webhooks/testing/store-suite';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { testService } from '../../../scripts/services/env.js';
import { createRedisStore } from './index.js';

const redis = testService('redis');

runStoreConformance(
  'redis store (ioredis)',
  async () => {
    const client = new Redis(redis.url!);
    const other = new Redis(redis.url!); // a second connection: another process of the fleet
    const prefix = `kyb:test:${crypto.randomUUID()}:`;
    return {
      store: createRedisStore({ client, prefix }),
      peer: createRedisStore({ client: other, prefix }),
      async cleanup() {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length > 0) await client.del(...keys);
        client.disconnect();
        other.disconnect();
      },
    };
  },
  { skip: redis.skipReason },
);

runStoreConformance(
  'redis store (node-redis)',
  async () => {
    const client = createClient({ url: redis.url! });
    await client.connect();
    const other = await createClient({ url: redis.url! }).connect();
    const prefix = `kyb:test:${crypto.randomUUID()}:`;
    return {
      store: createRedisStore({ client, prefix }),
      peer: createRedisStore({ client: other, prefix }),
      async cleanup() {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length > 0) await client.del(keys);
        await client.close();
        await other.close();
      },
    };
  },
  { skip: redis.skipReason },
);
