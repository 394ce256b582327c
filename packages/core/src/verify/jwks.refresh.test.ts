// How the remote JWKS is refetched and what a failed fetch leaves for operators, through the public verifier with an
// injected fetch and clock: a delivery that joins another's fetch, a refetch for an unknown kid, the reason of each
// failed fetch (the logger's detail and the error's cause chain), and the bodies of fetches that are given up on.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createAttestationVerifier, type AttestationOptions, type EnvelopeIdentity } from './attestation.js';
import { KybWebhookError } from '../errors.js';

const START = Date.UTC(2026, 10, 23, 8, 0, 0);
const JWKS_URL = 'https://kyb.example.test/jwks';

let clock = START;
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: () => clock });
  stranger = await createTestSigner({ now: () => clock });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that counts its calls and answers as `respond` says. */
function countingFetch(respond: () => Promise<Response>) {
  const counted = {
    calls: 0,
    fetch: (async () => {
      counted.calls += 1;
      return respond();
    }) as unknown as typeof fetch,
  };
  return counted;
}

/** Verifies one attestation by `by` and gives the error (or undefined when it verified). */
function verifierFor(options: Partial<AttestationOptions>) {
  clock = START;
  const verify = createAttestationVerifier(
    { issuer: signer.issuer, audience: signer.audience, jwksUrl: JWKS_URL, ...options },
    () => clock,
  );
  return async (by: TestSigner = signer): Promise<KybWebhookError | undefined> => {
    const envelope = testEvents.dataRequestReleased();
    try {
      await verify(
        await by.attest(envelope, { claims: { iss: signer.issuer, aud: signer.audience } }),
        envelope as unknown as EnvelopeIdentity,
      );
      return undefined;
    } catch (error) {
      if (!(error instanceof KybWebhookError)) throw error;
      return error;
    }
  };
}

const codeOf = (error: KybWebhookError | undefined) => error?.code ?? 'ok';

describe('refetching the JWKS for a kid it does not have', () => {
  it('answers a delivery that joined a fetch in flight as it answers the one that started it', async () => {
    const fetcher = countingFetch(async () => {
      await sleep(50);
      return Response.json(signer.jwks);
    });
    const check = verifierFor({ fetch: fetcher.fetch });
    const answers = await Promise.all([check(stranger), check(stranger)]);
    expect({ codes: answers.map(codeOf), fetches: fetcher.calls }).toEqual({
      codes: ['attestation_invalid', 'attestation_invalid'],
      fetches: 1,
    });
  });

  it('refetches once, after the cooldown, and answers attestation_invalid when the new set lacks the kid too', async () => {
    const fetcher = countingFetch(async () => Response.json(signer.jwks));
    const check = verifierFor({ fetch: fetcher.fetch, jwksCooldownMs: 1_000 });
    expect(codeOf(await check())).toBe('ok');
    clock += 1_001;
    const error = await check(stranger);
    expect({ code: error?.code, detail: error?.detail, fetches: fetcher.calls }).toEqual({
      code: 'attestation_invalid',
      detail: 'no key for this kid in the KYB JWKS',
      fetches: 2,
    });
  });

  it('does not fetch a second time for an unknown kid when the fetch for the aged cache has just run', async () => {
    const fetcher = countingFetch(async () => Response.json(signer.jwks));
    const check = verifierFor({ fetch: fetcher.fetch, jwksCooldownMs: 0, jwksCacheMaxAgeMs: 1_000 });
    expect(codeOf(await check())).toBe('ok');
    clock += 2_000;
    expect({ code: codeOf(await check(stranger)), fetches: fetcher.calls }).toEqual({
      code: 'attestation_invalid',
      fetches: 2,
    });
  });
});

describe('a failed JWKS fetch says why in the detail for the logger', () => {
  // Credentials in jwksUrl are refused at creation (attestation.config.test.ts); a query is allowed, never shown.
  it('names the URL without its query', async () => {
    const check = verifierFor({
      jwksUrl: 'https://kyb.example.test/jwks?token=abc',
      fetch: countingFetch(async () => new Response(null, { status: 404 })).fetch,
    });
    const error = (await check()) as { detail?: string } | undefined;
    expect(error?.detail).toContain('JWKS https://kyb.example.test/jwks answered HTTP 404, expected 200');
    expect(error?.detail).not.toContain('token=abc');
  });

  it.each<[string, () => Promise<Response>, string]>([
    [
      'an error status without a body',
      async () => new Response(null, { status: 503 }),
      `JWKS ${JWKS_URL} answered HTTP 503, expected 200`,
    ],
    [
      'a declared size over the cap without a body',
      async () => new Response(null, { status: 200, headers: { 'content-length': String(10 * 1024 * 1024) } }),
      `JWKS response declares ${10 * 1024 * 1024} bytes, over attestation.jwksMaxBytes (${256 * 1024})`,
    ],
    ['a 200 without a body', async () => new Response(null, { status: 200 }), 'JWKS response is not UTF-8 JSON'],
    ['a network error', () => Promise.reject(new TypeError('fetch failed')), 'fetch failed'],
    // A fetch implementation that rejects with something other than an Error: its value is never shown.
    ['a rejection that is not an Error', () => Promise.reject('secret-looking text'), 'unknown error'],
  ])('%s', async (_name, respond, reason) => {
    const check = verifierFor({ fetch: countingFetch(respond).fetch, jwksTimeoutMs: 10_000 });
    const error = await Promise.race([check(), sleep(3_000).then(() => undefined)]);
    expect({ code: error?.code, detail: error?.detail }).toEqual({
      code: 'jwks_unavailable',
      detail: `no JWKS fetched yet; last fetch: ${reason}`,
    });
  });
});

describe('a failed JWKS fetch keeps its cause chain', () => {
  it('a body that is not UTF-8 JSON, with the decoding error below it', async () => {
    const check = verifierFor({
      fetch: countingFetch(async () => new Response(new Uint8Array([0xff, 0xfe]), { status: 200 })).fetch,
    });
    const error = await check();
    const fetchFailure = error?.cause as Error | undefined;
    expect({ message: fetchFailure?.message, cause: fetchFailure?.cause instanceof Error }).toEqual({
      message: 'JWKS response is not UTF-8 JSON',
      cause: true,
    });
  });

  it('a timeout, with the signal reason below it', async () => {
    const check = verifierFor({
      fetch: countingFetch(() => new Promise<Response>(() => {})).fetch,
      jwksTimeoutMs: 100,
    });
    const error = await check();
    const fetchFailure = error?.cause as Error | undefined;
    expect({ message: fetchFailure?.message, cause: (fetchFailure?.cause as Error | undefined)?.name }).toEqual({
      message: 'JWKS fetch timed out (attestation.jwksTimeoutMs)',
      cause: 'TimeoutError',
    });
  });

  it('an inline key set jose refuses, with jose’s error as the cause', () => {
    let thrown: unknown;
    try {
      createAttestationVerifier({ issuer: 'i', audience: 'a', jwks: { keys: [1 as never] } }, Date.now);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KybWebhookError);
    expect({
      code: (thrown as KybWebhookError).code,
      cause: (thrown as KybWebhookError).cause instanceof Error,
    }).toEqual({ code: 'config_invalid', cause: true });
  });
});

describe('jwksMaxStaleMs shorter than jwksCacheMaxAgeMs', () => {
  it('is refused at creation, saying what the stale period is', () => {
    let thrown: unknown;
    try {
      createAttestationVerifier(
        { issuer: 'i', audience: 'a', jwksUrl: JWKS_URL, jwksCacheMaxAgeMs: 60_000, jwksMaxStaleMs: 1_000 },
        () => START,
      );
    } catch (error) {
      thrown = error;
    }
    expect((thrown as KybWebhookError | undefined)?.message).toBe(
      'attestation.jwksMaxStaleMs (1000) must be at least attestation.jwksCacheMaxAgeMs (60000): ' +
        'it is how long keys stay usable while refreshes fail, counted from the last successful fetch.',
    );
  });
});

describe('a JWKS body that is given up on is cancelled, so its connection is freed', () => {
  /** A body that records its cancellation; `stall` sends one chunk and then nothing. */
  function trackedBody(stall: boolean) {
    const tracked = { cancelled: false, stream: undefined as unknown as ReadableStream<Uint8Array> };
    tracked.stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(stall ? '{"keys":[' : JSON.stringify(signer.jwks)));
        if (!stall) controller.close();
      },
      pull: () => (stall ? new Promise(() => {}) : undefined),
      cancel() {
        tracked.cancelled = true;
      },
    });
    return tracked;
  }

  it('the body of an answer that arrives after jwksTimeoutMs', async () => {
    const body = trackedBody(false);
    // A fetch that ignores its AbortSignal and answers 300 ms later.
    const check = verifierFor({
      fetch: countingFetch(() => sleep(300).then(() => new Response(body.stream, { status: 200 }))).fetch,
      jwksTimeoutMs: 100,
    });
    expect(codeOf(await check())).toBe('jwks_unavailable');
    await sleep(400);
    expect(body.cancelled).toBe(true);
  });

  it('an answer without a body that arrives after jwksTimeoutMs is dropped quietly', async () => {
    const check = verifierFor({
      fetch: countingFetch(() => sleep(300).then(() => new Response(null, { status: 200 }))).fetch,
      jwksTimeoutMs: 100,
    });
    expect(codeOf(await check())).toBe('jwks_unavailable');
    // An exception here would surface as an unhandled rejection and fail the run.
    await sleep(400);
  });

  it('a body that stops arriving', async () => {
    const body = trackedBody(true);
    const check = verifierFor({
      fetch: countingFetch(async () => new Response(body.stream, { status: 200 })).fetch,
      jwksTimeoutMs: 100,
    });
    expect(codeOf(await check())).toBe('jwks_unavailable');
    await sleep(50);
    expect(body.cancelled).toBe(true);
  });
});
