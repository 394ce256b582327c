import { describe, expect, it } from 'vitest';
import { Sealer } from './sealed.js';

const SECRET = 'a-secret-of-at-least-thirty-two-bytes!!';

describe('sealed cookie values', () => {
  it('open what they sealed', async () => {
    const sealer = new Sealer(SECRET, 'transaction');
    expect(await sealer.open(await sealer.seal({ jti: 'abc' }, 60))).toMatchObject({ jti: 'abc' });
  });

  it('are expired after their lifetime', async () => {
    const sealer = new Sealer(SECRET, 'transaction');
    expect(await sealer.open(await sealer.seal({ jti: 'abc' }, -60))).toBe('expired');
  });

  it('are not accepted for another use (a session value is no transaction)', async () => {
    const session = new Sealer(SECRET, 'session');
    expect(await new Sealer(SECRET, 'transaction').open(await session.seal({ sub: '0xabc' }, 60))).toBe('invalid');
  });

  it('are not opened with another secret', async () => {
    const other = new Sealer('another-secret-of-thirty-two-bytes-or-more', 'transaction');
    expect(await new Sealer(SECRET, 'transaction').open(await other.seal({ jti: 'abc' }, 60))).toBe('invalid');
  });

  it.each(['', 'not-a-jwe', 'a.b.c.d.e'])('refuse %j', async (value) => {
    expect(await new Sealer(SECRET, 'transaction').open(value)).toBe('invalid');
  });
});
