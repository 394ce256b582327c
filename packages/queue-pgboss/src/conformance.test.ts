import { runQueueConformance } from '@kyb-webhooks/testing/queue-suite';
import type { PgBoss } from 'pg-boss';
import { afterAll } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createPgBossQueue } from './index.js';
import { startBoss, stopBosses, testQueueName, testSchema } from './test-helpers.js';

const postgres = testService('postgres');
const schema = testSchema();
// Two instances for the whole file, started on first use: a fresh pg-boss queue per case is enough isolation, and
// installing the schema per case would cost seconds each.
let bosses: Promise<[PgBoss, PgBoss]> | undefined;
afterAll(async () => {
  if (bosses) await stopBosses(schema, await bosses);
});

runQueueConformance(
  'pg-boss queue',
  async ({ retryLimit }) => {
    bosses ??= (async () => [await startBoss(postgres.url!, schema), await startBoss(postgres.url!, schema)])();
    const [boss, other] = await bosses;
    const name = testQueueName();
    // The shortest retry delay pg-boss allows: 0, at once, without backoff; polling at its floor of 0.5 s.
    const options = { name, schema, retryLimit, retryDelaySeconds: 0, pollingIntervalSeconds: 0.5 };
    return {
      queue: createPgBossQueue({ boss, ...options }),
      peer: createPgBossQueue({ boss: other, ...options }),
      cleanup() {},
    };
  },
  { timeoutMs: 30_000, skip: postgres.skipReason },
);
