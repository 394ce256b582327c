import { expectConfigInvalid } from '@kyb-webhooks/testing/store-suite';
import { PgBoss } from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { createPgBossQueue, jobIdOf } from './index.js';

// Never started: creating a queue must not touch the database, and this is the real class's shape.
const boss = new PgBoss('postgres://127.0.0.1:1/none');

describe('createPgBossQueue refuses a bad configuration at creation', () => {
  it.each<[string, unknown, string[]]>([
    ['no options', undefined, ['createPgBossQueue needs an options object', 'new PgBoss(process.env.DATABASE_URL)']],
    ['no boss', {}, ['`boss` is missing', 'pass your pg-boss 12 instance']],
    ['a connection string instead of an instance', { boss: 'postgres://x' }, ['`boss` must be an object with']],
    [
      'an object that is not pg-boss',
      { boss: { send() {} } },
      ['`boss` has no fetch, fail', 'findJobs or getDb methods'],
    ],
    ['a start() promise that was not awaited', { boss: boss.start().catch(() => {}) }, ['`boss` must be an object']],
    ['a queue name pg-boss refuses', { boss, name: 'kyb webhooks' }, ['`name` must be a pg-boss queue name']],
    ['a negative retry limit', { boss, retryLimit: -1 }, ['`retryLimit` must be a whole number of at least 0']],
    [
      'a delay in milliseconds',
      { boss, retryDelayMs: 500 },
      ['`retryDelayMs` is not an option: did you mean `retryDelaySeconds`?'],
    ],
    ['a fractional delay', { boss, retryDelaySeconds: 0.5 }, ['`retryDelaySeconds` must be a whole number of seconds']],
    ['a zero backlog', { boss, maxBacklog: 0 }, ['`maxBacklog` must be a positive whole number of jobs']],
    [
      'polling faster than pg-boss allows',
      { boss, pollingIntervalSeconds: 0.1 },
      ['`pollingIntervalSeconds` must be a number of seconds from 0.5'],
    ],
    [
      'a schema that is not a name',
      { boss, schema: 'pg boss; drop' },
      ['`schema` must be the `schema` option of your PgBoss'],
    ],
    ['an unknown option', { boss, concurrency: 4 }, ['`concurrency` is not an option']],
  ])('%s', (_, options, words) => {
    expectConfigInvalid(() => createPgBossQueue(options as never), words);
  });

  it('accepts the documented defaults and names its queues after `name`', () => {
    const queue = createPgBossQueue({ boss });
    expect(queue.name).toBe('pg-boss queue');
    expect(queue.queueName).toBe('kyb-webhooks');
    expect(queue.deadLetterQueueName).toBe('kyb-webhooks-dead-letter');
    expect(createPgBossQueue({ boss, name: 'shop/kyb' }).deadLetterQueueName).toBe('shop/kyb-dead-letter');
  });

  it('refuses a worker concurrency that is not a whole number of at least 1', async () => {
    const queue = createPgBossQueue({ boss });
    await expect(queue.work(async () => {}, { concurrency: 0 })).rejects.toMatchObject({ code: 'config_invalid' });
  });
});

describe('jobIdOf', () => {
  it('derives a version 8 UUID from the SHA-256 of the key, the same in every process', async () => {
    const id = await jobIdOf('01JD3Q8F2M6X1N0C4T7B9R5K2W');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await jobIdOf('01JD3Q8F2M6X1N0C4T7B9R5K2W')).toBe(id);
    expect(await jobIdOf('01JD3Q8F2M6X1N0C4T7B9R5K2X')).not.toBe(id);
    // Pinned: a change here would make every event already queued enqueue again after an upgrade.
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('evt_1')));
    const hex = Buffer.from(digest.subarray(0, 16)).toString('hex');
    const expected = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    expect(await jobIdOf('evt_1')).toBe(expected);
    expect(await jobIdOf('évènement ✓')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
