// The KeySource contract (jwks.ts) on its own: peek answers from memory only what get has imported, get hands back
// the same imported key each time, and an unknown kid is an UnknownKidError (ordering reports it as key_retired) only
// when it was checked against keys that are current: the inline set, or a JWKS fetched during that very lookup.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createInlineKeySource, createRemoteKeySource, UnknownKidError, type KeySource } from './jwks.js';

const START = Date.UTC(2026, 10, 22, 12, 0, 0);

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner();
});

async function refusalOf(promise: Promise<unknown>): Promise<{ kind: string; code: string; detail?: string }> {
  try {
    await promise;
    return { kind: 'none', code: 'ok' };
  } catch (error) {
    if (!(error instanceof KybWebhookError)) throw error;
    const kind = error instanceof UnknownKidError ? 'UnknownKidError' : 'KybWebhookError';
    return { kind, code: error.code, detail: error.detail as string };
  }
}

/** A remote source over a fetch that serves `served()` and counts its calls, on a clock the test moves. */
function remote(
  cooldownMs: number,
  served: () => unknown = () => signer.jwks,
  maxStaleMs = 3_600_000,
): { keys: KeySource; fetches: () => number; clock: { now: number } } {
  const clock = { now: START };
  let calls = 0;
  const keys = createRemoteKeySource(
    {
      url: new URL('https://kyb.example/.well-known/kyb-jwks.json'),
      fetch: (async () => {
        calls += 1;
        return Response.json(served());
      }) as typeof fetch,
      cooldownMs,
      cacheMaxAgeMs: 600_000,
      maxStaleMs,
      timeoutMs: 5_000,
      maxBytes: 262_144,
    },
    () => clock.now,
  );
  return { keys, fetches: () => calls, clock };
}

describe('an inline key set', () => {
  it('peeks nothing until get has imported the key, then the very key get returned', async () => {
    const keys = createInlineKeySource(signer.jwks);
    expect(keys.peek(signer.kid)).toBeUndefined();
    const key = await keys.get(signer.kid);
    expect(key.signatureBytes).toBe(256);
    expect(keys.peek(signer.kid)).toBe(key);
    expect(await keys.get(signer.kid)).toBe(key);
  });

  it('answers an unknown kid with an UnknownKidError', async () => {
    expect(await refusalOf(createInlineKeySource(signer.jwks).get('nobody'))).toEqual({
      kind: 'UnknownKidError',
      code: 'attestation_invalid',
      detail: 'no key for this kid in attestation.jwks',
    });
  });
});

describe('a remote key set', () => {
  it('peeks nothing before the first fetch, then the key get imported', async () => {
    const { keys, fetches } = remote(30_000);
    expect(keys.peek(signer.kid)).toBeUndefined();
    const key = await keys.get(signer.kid);
    expect({ peeked: keys.peek(signer.kid), again: await keys.get(signer.kid), fetches: fetches() }).toEqual({
      peeked: key,
      again: key,
      fetches: 1,
    });
  });

  it('answers an unknown kid found missing by a fetch of this lookup with an UnknownKidError', async () => {
    const { keys, fetches } = remote(30_000);
    expect(await refusalOf(keys.get('nobody'))).toEqual({
      kind: 'UnknownKidError',
      code: 'attestation_invalid',
      detail: 'no key for this kid in the KYB JWKS',
    });
    expect(fetches()).toBe(1);
  });

  it('answers an unknown kid checked only against cached keys (no refetch allowed yet) with a plain refusal', async () => {
    const { keys, fetches } = remote(30_000);
    await keys.get(signer.kid);
    expect(await refusalOf(keys.get('nobody'))).toEqual({
      kind: 'KybWebhookError',
      code: 'attestation_invalid',
      detail: 'no key for this kid in the KYB JWKS',
    });
    expect(fetches()).toBe(1);
  });

  it('refetches for an unknown kid once the cooldown allows, and finds a key the refetch brings', async () => {
    const rotated = await createTestSigner();
    let served: unknown = signer.jwks;
    const { keys, fetches, clock } = remote(1_000, () => served);
    await keys.get(signer.kid);
    served = { keys: [...signer.jwks.keys, ...rotated.jwks.keys] };
    clock.now += 1_000;
    const key = await keys.get(rotated.kid);
    expect({ bytes: key.signatureBytes, fetches: fetches(), peeked: keys.peek(rotated.kid) }).toEqual({
      bytes: 256,
      fetches: 2,
      peeked: key,
    });
  });

  // A cooldown longer than the stale period (allowed by the options) leaves stale keys with no fetch allowed yet:
  // the refusal says so, and names no failed fetch, since none failed.
  it('answers jwks_unavailable for stale keys when no refresh is allowed yet, naming no failed fetch', async () => {
    const { keys, fetches, clock } = remote(7_200_000, () => signer.jwks, 3_600_000);
    await keys.get(signer.kid);
    clock.now += 3_600_001;
    const error = await keys.get(signer.kid).then(
      () => undefined,
      (refusal: unknown) => refusal as KybWebhookError,
    );
    expect({ code: error?.code, detail: error?.detail, cause: error?.cause, fetches: fetches() }).toEqual({
      code: 'jwks_unavailable',
      detail: 'the last JWKS fetched is older than attestation.jwksMaxStaleMs',
      cause: undefined,
      fetches: 1,
    });
  });
});

describe('a fetch that fails with a URL in its message', () => {
  it('names the URL in the refusal without its credentials or query', async () => {
    const keys = createRemoteKeySource(
      {
        url: new URL('https://kyb.example/.well-known/kyb-jwks.json'),
        fetch: (async () => {
          throw new TypeError(
            'request to https://proxy-user:s3cr3t-pass@proxy.example:8080/kyb-jwks.json?token=s3cr3t-token failed',
          );
        }) as typeof fetch,
        cooldownMs: 1_000,
        cacheMaxAgeMs: 600_000,
        maxStaleMs: 3_600_000,
        timeoutMs: 5_000,
        maxBytes: 262_144,
      },
      () => START,
    );
    const refusal = await refusalOf(keys.check());
    expect(refusal.code).toBe('jwks_unavailable');
    expect(refusal.detail).toContain('request to https://proxy.example:8080/kyb-jwks.json failed');
    expect(refusal.detail).not.toMatch(/s3cr3t/);
  });
});
