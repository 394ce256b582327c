// A remote key set whose fetch another lookup started (jwks.ts, refreshIfAllowed): a lookup joins the fetch in flight
// and answers from what it brought, as the one that started it does; it waits for it at most jwksTimeoutMs of its own
// (on Workers the starting request's I/O, its timeout included, may be cancelled) and then answers jwks_unavailable
// rather than calling a kid unknown; it joins even when the clock stepped back into the cooldown; and a lookup
// that began in the cooldown looks once more when the cooldown has ended by the time its first look failed.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createRemoteKeySource, UnknownKidError, type KeySource } from './jwks.js';

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const TIMEOUT_MS = 50;

let signer: TestSigner;
let rotated: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner();
  rotated = await createTestSigner();
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
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

/** What `promise` settled to within `ms`, or 'still waiting'. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([promise, new Promise<'still waiting'>((resolve) => setTimeout(resolve, ms, 'still waiting'))]);
}

/**
 * A remote source on a clock the test moves, over a fetch that answers `served()` for each call, at once or, while
 * `hold()` is in force, only when the test releases it.
 */
function remote(options: { cooldownMs?: number; cacheMaxAgeMs?: number } = {}) {
  const clock = { now: START };
  let served: unknown = signer.jwks;
  const held: (() => void)[] = [];
  let holding = false;
  let calls = 0;
  const keys: KeySource = createRemoteKeySource(
    {
      url: new URL('https://kyb.example/.well-known/kyb-jwks.json'),
      fetch: (async () => {
        calls += 1;
        const body = served;
        if (holding) await new Promise<void>((resolve) => held.push(resolve));
        return Response.json(body);
      }) as typeof fetch,
      cooldownMs: options.cooldownMs ?? 30_000,
      cacheMaxAgeMs: options.cacheMaxAgeMs ?? 600_000,
      maxStaleMs: 3_600_000,
      timeoutMs: TIMEOUT_MS,
      maxBytes: 262_144,
    },
    () => clock.now,
  );
  return {
    keys,
    clock,
    fetches: () => calls,
    serve: (jwks: unknown) => (served = jwks),
    hold: () => (holding = true),
    release: () => {
      holding = false;
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

describe('a lookup that joins a fetch in flight', () => {
  it('answers an unknown kid the fetch found missing with an UnknownKidError, as the lookup that started it', async () => {
    const { keys, hold, release, fetches } = remote();
    hold();
    const starter = refusalOf(keys.get('nobody'));
    const joiner = refusalOf(keys.get('nobody'));
    release();
    const expected = {
      kind: 'UnknownKidError',
      code: 'attestation_invalid',
      detail: 'no key for this kid in the KYB JWKS',
    };
    expect({ starter: await starter, joiner: await joiner, fetches: fetches() }).toEqual({
      starter: expected,
      joiner: expected,
      fetches: 1,
    });
  });

  it('finds a kid the fetch brought, with one fetch for both', async () => {
    const { keys, hold, release, fetches } = remote();
    hold();
    const starter = keys.get(signer.kid);
    const joiner = keys.get(signer.kid);
    release();
    const [first, second] = await Promise.all([starter, joiner]);
    expect({ bytes: [first.signatureBytes, second.signatureBytes], fetches: fetches() }).toEqual({
      bytes: [256, 256],
      fetches: 1,
    });
  });

  it('leaves no timer of its own running once the fetch has settled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { keys, hold, release } = remote();
    hold();
    const starter = keys.get(signer.kid);
    const joiner = keys.get(signer.kid);
    release();
    await Promise.all([starter, joiner]);
    // A timer left behind would keep a Node process (a script, a test run) alive for jwksTimeoutMs.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('joins it even when the clock stepped back into the cooldown of the fetch before', async () => {
    const { keys, clock, hold, release, serve } = remote({ cooldownMs: 30_000 });
    expect(await keys.check()).toBe(1);
    serve({ keys: [...signer.jwks.keys, ...rotated.jwks.keys] });
    clock.now = START + 60_000;
    hold();
    const starter = keys.check();
    // The wall clock is set back (an NTP step) while the fetch is in flight.
    clock.now = START + 10_000;
    const joiner = keys.check();
    release();
    expect({ starter: await starter, joiner: await joiner }).toEqual({ starter: 2, joiner: 2 });
  });
});

describe('a lookup that joins a fetch which does not settle within jwksTimeoutMs', () => {
  // On Workers the fetch belongs to the request that started it: when that request ends its I/O is cancelled, its
  // timeout included, and the fetch never settles for the others. Here: a timeout signal that never fires.
  const neverTimesOut = () => vi.spyOn(AbortSignal, 'timeout').mockImplementation(() => new AbortController().signal);

  it('gives up after jwksTimeoutMs and answers jwks_unavailable when no set was ever fetched', async () => {
    const { keys, hold, release } = remote();
    neverTimesOut();
    hold();
    const starter = keys.get(signer.kid);
    const joiner = refusalOf(keys.get(signer.kid));
    expect(await within(joiner, 2_000)).toEqual({
      kind: 'KybWebhookError',
      code: 'jwks_unavailable',
      detail: 'no JWKS fetched yet',
    });
    release();
    expect((await starter).signatureBytes).toBe(256);
  });

  it('gives up after jwksTimeoutMs and answers jwks_unavailable, not an unknown kid, for a kid the last set lacks', async () => {
    const { keys, clock, hold, release } = remote({ cooldownMs: 1_000, cacheMaxAgeMs: 60_000 });
    await keys.get(signer.kid);
    clock.now += 60_000;
    neverTimesOut();
    hold();
    const starter = keys.get(signer.kid);
    const joiner = refusalOf(keys.get(rotated.kid));
    expect(await within(joiner, 2_000)).toEqual({
      kind: 'KybWebhookError',
      code: 'jwks_unavailable',
      detail: 'no key for this kid in the last good JWKS and no refresh succeeded',
    });
    release();
    expect((await starter).signatureBytes).toBe(256);
  });

  it('still answers a kid the last set has', async () => {
    const { keys, clock, hold, release } = remote({ cooldownMs: 1_000, cacheMaxAgeMs: 60_000 });
    const key = await keys.get(signer.kid);
    clock.now += 60_000;
    neverTimesOut();
    hold();
    const starter = keys.get(signer.kid);
    expect(await within(keys.get(signer.kid), 2_000)).toBe(key);
    release();
    await starter;
  });
});

describe('a lookup that began in the cooldown', () => {
  it('looks once more for an unknown kid when the cooldown ended while it looked', async () => {
    // A cooldown longer than the cache age: the aged set cannot be refreshed when the lookup begins.
    const { keys, clock, serve, fetches } = remote({ cooldownMs: 700_000, cacheMaxAgeMs: 600_000 });
    await keys.get(signer.kid);
    serve({ keys: [...signer.jwks.keys, ...rotated.jwks.keys] });
    clock.now = START + 650_000;
    const lookup = keys.get(rotated.kid);
    // The clock moves on while the lookup searches the aged set.
    clock.now = START + 700_000;
    expect({ bytes: (await lookup).signatureBytes, fetches: fetches() }).toEqual({ bytes: 256, fetches: 2 });
  });
});
