// Test-only helpers shared by the BullMQ queue tests; package.json "files" leaves this file out of the package.
import { Redis } from 'ioredis';

/** A connection as BullMQ's workers want it (they duplicate it for their blocking reads). */
export function connect(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** A queue name and a key prefix of their own for each case, so cases and files never share keys. */
export function testNames(): { name: string; prefix: string } {
  const id = crypto.randomUUID().slice(0, 8);
  return { name: `kyb-test-${id}`, prefix: `kybtest-${id}` };
}

/** Deletes every key under `prefix`. */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds, or fails after `ms`. */
export async function until(done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await sleep(20);
  }
}
