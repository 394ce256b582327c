// The cache-age edge of the remote JWKS (issue 11, mutation survivors): keys fetched at T are fresh until just before
// T + cacheMaxAgeMs and due for a refresh at exactly T + cacheMaxAgeMs, both for the synchronous peek and for get.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, type TestSigner } from '../../test-kit.js';
import { createRemoteKeySource, type KeySource } from './jwks.js';

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const MAX_AGE = 600_000;

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner();
});

/** A key source over a fetch that always serves the signer's JWKS and counts its calls, on a clock the test moves. */
function source(): { keys: KeySource; fetches: () => number; clock: { now: number } } {
  const clock = { now: START };
  let calls = 0;
  const fetchJwks = (async () => {
    calls += 1;
    return new Response(JSON.stringify(signer.jwks), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const keys = createRemoteKeySource(
    {
      url: new URL('https://kyb.example/.well-known/kyb-jwks.json'),
      fetch: fetchJwks,
      cooldownMs: 0,
      cacheMaxAgeMs: MAX_AGE,
      maxStaleMs: 12 * MAX_AGE,
      timeoutMs: 5_000,
      maxBytes: 262_144,
    },
    () => clock.now,
  );
  return { keys, fetches: () => calls, clock };
}

describe('remote JWKS cache age', () => {
  it('peek answers from the cache one millisecond before cacheMaxAgeMs', async () => {
    const { keys, clock } = source();
    await keys.get(signer.kid);
    clock.now = START + MAX_AGE - 1;
    expect(keys.peek(signer.kid)).toBeDefined();
  });

  it('peek stops answering at exactly cacheMaxAgeMs, so the delivery goes through get and a refresh', async () => {
    const { keys, clock } = source();
    await keys.get(signer.kid);
    clock.now = START + MAX_AGE;
    expect(keys.peek(signer.kid)).toBeUndefined();
  });

  it('get does not refetch one millisecond before cacheMaxAgeMs', async () => {
    const { keys, fetches, clock } = source();
    await keys.get(signer.kid);
    clock.now = START + MAX_AGE - 1;
    await keys.get(signer.kid);
    expect(fetches()).toBe(1);
  });

  it('get refetches at exactly cacheMaxAgeMs', async () => {
    const { keys, fetches, clock } = source();
    await keys.get(signer.kid);
    clock.now = START + MAX_AGE;
    await keys.get(signer.kid);
    expect(fetches()).toBe(2);
  });
});
