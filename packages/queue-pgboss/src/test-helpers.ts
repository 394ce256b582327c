// Test-only helpers shared by the pg-boss queue tests; package.json "files" leaves this file out of the package.
import { PgBoss } from 'pg-boss';

/** A PostgreSQL schema of its own for each test file, so files running in parallel never share pg-boss tables. */
export function testSchema(): string {
  return `kyb_boss_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

/** A queue name of its own for each case. */
export function testQueueName(): string {
  return `kyb-test-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * Starts a pg-boss instance on `schema` (installing it on first use). Maintenance and cron are off: the tests need
 * neither, and the machine running them is shared. pg-boss's 'error' event must have a listener, or it throws.
 */
export async function startBoss(url: string, schema: string, errors: unknown[] = []): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false, max: 6 });
  boss.on('error', (error) => void errors.push(error));
  await boss.start();
  return boss;
}

/** Stops the instances (their pools kept open), drops the schema, then closes the pools. */
export async function stopBosses(schema: string, bosses: PgBoss[]): Promise<void> {
  for (const boss of bosses) await boss.stop({ graceful: true, timeout: 5_000, close: false });
  await bosses[0]?.getDb().executeSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  for (const boss of bosses) await (boss.getDb() as { close?: () => Promise<void> }).close?.();
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds, or fails after `ms`. */
export async function until(done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await sleep(25);
  }
}
