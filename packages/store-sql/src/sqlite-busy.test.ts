import { describe, expect, it } from 'vitest';
import { isSqliteBusy, retryWhileBusy } from './sqlite/busy.js';

const busy = (code = 'SQLITE_BUSY') => Object.assign(new Error('database is locked'), { code });
const BOUNDS = { maxMs: 50, firstDelayMs: 1, maxDelayMs: 4 };

describe('retrying a SQLite step that met SQLITE_BUSY', () => {
  it.each(['SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT'])(
    'treats %s as busy',
    (code) => {
      expect(isSqliteBusy(busy(code))).toBe(true);
    },
  );

  it.each([['SQLITE_LOCKED'], ['SQLITE_CORRUPT'], [undefined]])('does not treat %s as busy', (code) => {
    expect(isSqliteBusy(Object.assign(new Error('x'), { code }))).toBe(false);
  });

  it('retries a busy step until it succeeds', async () => {
    let calls = 0;
    const result = await retryWhileBusy(() => {
      calls += 1;
      if (calls < 4) throw busy();
      return 'done';
    }, BOUNDS);
    expect({ result, calls }).toEqual({ result: 'done', calls: 4 });
  });

  it('throws any other error at once', async () => {
    let calls = 0;
    const corrupt = Object.assign(new Error('malformed'), { code: 'SQLITE_CORRUPT' });
    await expect(
      retryWhileBusy(() => {
        calls += 1;
        throw corrupt;
      }, BOUNDS),
    ).rejects.toBe(corrupt);
    expect(calls).toBe(1);
  });

  it('gives up after maxMs and throws the last SQLITE_BUSY', async () => {
    const started = Date.now();
    await expect(
      retryWhileBusy(() => {
        throw busy();
      }, BOUNDS),
    ).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(BOUNDS.maxMs);
    expect(Date.now() - started).toBeLessThan(BOUNDS.maxMs + 500);
  });

  it('sleeps a jittered, doubling pause between attempts, capped at maxDelayMs', async () => {
    const pauses: number[] = [];
    let calls = 0;
    await retryWhileBusy(
      () => {
        calls += 1;
        if (calls < 6) throw busy();
      },
      { maxMs: 10_000, firstDelayMs: 2, maxDelayMs: 8 },
      async (ms) => void pauses.push(ms),
    );
    const nominal = [2, 4, 8, 8, 8];
    expect(pauses).toHaveLength(nominal.length);
    pauses.forEach((pause, index) => {
      expect(pause).toBeGreaterThanOrEqual(nominal[index]! / 2);
      expect(pause).toBeLessThanOrEqual(nominal[index]! * 1.5);
    });
  });
});
