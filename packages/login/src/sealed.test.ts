import { EncryptJWT } from 'jose';
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

  it('open, during a rotation, what the old secret sealed; seal with the new one, which the old alone cannot open', async () => {
    const NEW = 'the-new-secret-of-thirty-two-bytes-or-more';
    const before = await new Sealer(SECRET, 'session').seal({ sub: '0xabc' }, 60);
    const rotating = new Sealer([NEW, SECRET], 'session');
    expect(await rotating.open(before)).toMatchObject({ sub: '0xabc' });
    const after = await rotating.seal({ sub: '0xdef' }, 60);
    expect(await new Sealer(NEW, 'session').open(after)).toMatchObject({ sub: '0xdef' });
    expect(await new Sealer(SECRET, 'session').open(after)).toBe('invalid');
    // Once the old secret is dropped, what it sealed no longer opens.
    expect(await new Sealer([NEW], 'session').open(before)).toBe('invalid');
  });

  it('are expired during a rotation when the old secret sealed them and their lifetime ended', async () => {
    const NEW = 'the-new-secret-of-thirty-two-bytes-or-more';
    const expired = await new Sealer(SECRET, 'session').seal({ sub: '0xabc' }, -60);
    expect(await new Sealer([NEW, SECRET], 'session').open(expired)).toBe('expired');
  });

  it.each(['', 'not-a-jwe', 'a.b.c.d.e'])('refuse %j', async (value) => {
    expect(await new Sealer(SECRET, 'transaction').open(value)).toBe('invalid');
  });
});

describe('sealed cookie values across releases and uses', () => {
  // Sealed by this release (expires in 2102): a change of the key derivation would sign everybody out on upgrade.
  const EARLIER =
    'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIiwiY3R5Ijoia3liLWxvZ2luIHNlc3Npb24gdjEifQ..VBNBPQHKE_dip-fm.9zctnGDzJnqo7otlHdTTWd5BvUhGbHTMhJEsLGwxWvhy-Pq35Dld0D3EmfTAnqZSQg.lF-srA5ndPWqvHI5BFFlaw';

  it('a session sealed by an earlier release still opens with the same secret', async () => {
    expect(await new Sealer(SECRET, 'kyb-login session v1').open(EARLIER)).toMatchObject({ sub: '0xabc' });
  });

  it('a value under the right key that names another use is invalid', async () => {
    // The key of the use 'transaction', as Sealer derives it (HKDF-SHA256, salt '@kyb-webhooks/login', info = use).
    const encoder = new TextEncoder();
    const material = await crypto.subtle.importKey('raw', encoder.encode(SECRET), 'HKDF', false, ['deriveBits']);
    const key = new Uint8Array(
      await crypto.subtle.deriveBits(
        {
          name: 'HKDF',
          hash: 'SHA-256',
          salt: encoder.encode('@kyb-webhooks/login'),
          info: encoder.encode('transaction'),
        },
        material,
        256,
      ),
    );
    const seal = (cty: string) =>
      new EncryptJWT({ jti: 'abc' })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty })
        .setExpirationTime('60s')
        .encrypt(key);
    const sealer = new Sealer(SECRET, 'transaction');
    expect(await sealer.open(await seal('transaction'))).toMatchObject({ jti: 'abc' });
    expect(await sealer.open(await seal('session'))).toBe('invalid');
  });
});
