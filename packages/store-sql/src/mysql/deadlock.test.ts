import { describe, expect, it } from 'vitest';
import { ER_LOCK_DEADLOCK, isDeadlock, MAX_DEADLOCK_ATTEMPTS, retryingDeadlocks } from './deadlock.js';

/** An error as mysql2 rejects a statement with: the server's error number in `errno`. */
const serverError = (errno: number, message: string) => Object.assign(new Error(message), { errno });

describe('retryingDeadlocks', () => {
  it('runs a step chosen as a deadlock victim again, and answers what the run that got through answered', async () => {
    let calls = 0;
    const answer = await retryingDeadlocks(async () => {
      calls++;
      if (calls < 3) throw serverError(ER_LOCK_DEADLOCK, 'Deadlock found when trying to get lock');
      return 'done';
    });
    expect({ answer, calls }).toEqual({ answer: 'done', calls: 3 });
  });

  it(`gives up after ${MAX_DEADLOCK_ATTEMPTS} runs in all, throwing the last deadlock`, async () => {
    let calls = 0;
    const step = async () => {
      calls++;
      throw serverError(ER_LOCK_DEADLOCK, `deadlock ${calls}`);
    };
    await expect(retryingDeadlocks(step)).rejects.toThrow(`deadlock ${MAX_DEADLOCK_ATTEMPTS}`);
    expect(calls).toBe(MAX_DEADLOCK_ATTEMPTS);
  });

  it('throws any other error at once, a lock wait timeout included', async () => {
    for (const error of [serverError(1205, 'Lock wait timeout exceeded'), new Error('connection lost'), null]) {
      let calls = 0;
      const failing = retryingDeadlocks(async () => {
        calls++;
        throw error;
      });
      await expect(failing).rejects.toBe(error);
      expect(calls).toBe(1);
    }
  });
});

describe('isDeadlock', () => {
  it('is true only for the server error 1213', () => {
    expect(isDeadlock(serverError(1213, 'x'))).toBe(true);
    expect([serverError(1205, 'x'), { errno: '1213' }, new Error('1213'), undefined, null].map(isDeadlock)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
