import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryTransactionStore, type LoginTransaction } from './transaction-store.js';

// memoryTransactionStore as the login uses it: a transaction is taken once, until its TTL, and the oldest go first
// when the store is full.

const tx = (returnTo: string): LoginTransaction => ({
  state: `state-${returnTo}`,
  codeVerifier: 'v'.repeat(43),
  nonce: 'n'.repeat(43),
  returnTo,
  redirectUri: 'http://127.0.0.1:9/auth/callback',
});

afterEach(() => {
  vi.useRealTimers();
});

describe('memoryTransactionStore', () => {
  it('gives a transaction once (a replay finds nothing)', async () => {
    const store = memoryTransactionStore();
    await store.set('a', tx('/a'), 60);
    expect(await store.take('a')).toEqual(tx('/a'));
    expect(await store.take('a')).toBeUndefined();
  });

  it('gives nothing once the TTL has passed, to the millisecond', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = memoryTransactionStore();
    const t0 = Date.now();
    await store.set('a', tx('/a'), 60);
    await store.set('b', tx('/b'), 60);
    vi.setSystemTime(t0 + 59_999);
    expect(await store.take('a')).toEqual(tx('/a'));
    vi.setSystemTime(t0 + 60_000);
    expect(await store.take('b')).toBeUndefined();
  });

  it('drops the oldest when full', async () => {
    const store = memoryTransactionStore({ maxEntries: 2 });
    await store.set('a', tx('/a'), 60);
    await store.set('b', tx('/b'), 60);
    await store.set('c', tx('/c'), 60);
    expect(await store.take('a')).toBeUndefined();
    expect((await store.take('b'))?.returnTo).toBe('/b');
    expect((await store.take('c'))?.returnTo).toBe('/c');
  });
});
