// The KYB JWKS under failure (issue 11 point 6), through the public verifier: a real JWKS server on 127.0.0.1 or an
// injected fetch, and the verifier's injected clock, so hours of cache age pass in a test without waiting for them.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, startJwksServer, testEvents, type JwksServer, type TestSigner } from '../../test-kit.js';
import { createAttestationVerifier, type AttestationOptions, type EnvelopeIdentity } from './attestation.js';
import { KybWebhookError } from '../errors.js';

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let clock = START;
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: () => clock });
  stranger = await createTestSigner({ now: () => clock });
});

const servers: JwksServer[] = [];
afterEach(async () => {
  clock = START;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(): Promise<JwksServer> {
  const server = await startJwksServer(() => signer.jwks);
  servers.push(server);
  return server;
}

let delivery = 0;
/** The logger detail of the last refusal `check` saw: which step failed, for operators. */
let lastDetail: string | undefined;
function verifierFor(options: Partial<AttestationOptions>) {
  const verify = createAttestationVerifier(
    { issuer: signer.issuer, audience: signer.audience, ...options },
    () => clock,
  );
  return async (by: TestSigner = signer): Promise<string> => {
    const envelope = testEvents.dataRequestReleased();
    // A header of its own per delivery, so that no memo of decoded headers can answer for the key source.
    const header = { 'x-delivery': (delivery += 1) };
    try {
      await verify(
        await by.attest(envelope, { header, claims: { iss: signer.issuer, aud: signer.audience } }),
        envelope as unknown as EnvelopeIdentity,
      );
      return 'ok';
    } catch (error) {
      if (!(error instanceof KybWebhookError)) throw error;
      lastDetail = error.detail;
      return error.code;
    }
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that counts its calls and then behaves as `respond` says. */
function countingFetch(respond: (url: string, init?: RequestInit) => Promise<Response>) {
  const counted = {
    calls: 0,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      counted.calls += 1;
      return respond(String(input), init);
    }) as typeof fetch,
  };
  return counted;
}

describe('JWKS fetch failures are cooled down too', () => {
  it('fetches once per cooldown while the host fails, however many deliveries need keys', async () => {
    const server = await serve();
    server.setStatus(500);
    const check = verifierFor({ jwksUrl: server.url });
    const codes = new Set<string>();
    for (let i = 0; i < 25; i++) codes.add(await check());
    expect({ codes: [...codes], fetches: server.requests }).toEqual({ codes: ['jwks_unavailable'], fetches: 1 });
    expect(lastDetail).toBe(`no JWKS fetched yet; last fetch: JWKS ${server.url} answered HTTP 500, expected 200`);
  });

  it('fetches once per cooldown while the host fails and a flood of unknown kids arrives', async () => {
    const server = await serve();
    // The real-time sleep lets a cooldown counted on the wall clock lapse as well as one counted on the verifier's.
    const check = verifierFor({ jwksUrl: server.url, jwksCooldownMs: 50 });
    expect(await check()).toBe('ok');
    server.setStatus(503);
    clock += 51;
    await sleep(60);
    const codes = new Set<string>();
    for (let i = 0; i < 25; i++) codes.add(await check(stranger));
    expect({ codes: [...codes], fetches: server.requests }).toEqual({ codes: ['jwks_unavailable'], fetches: 2 });
    expect(lastDetail).toBe(
      `no key for this kid in the last good JWKS and no refresh succeeded; last fetch: JWKS ${server.url} answered HTTP 503, expected 200`,
    );
  });

  it('tries again after the cooldown and recovers when the host does', async () => {
    const server = await serve();
    server.setStatus(500);
    const check = verifierFor({ jwksUrl: server.url, jwksCooldownMs: 30_000 });
    expect(await check()).toBe('jwks_unavailable');
    server.setStatus(200);
    clock += 29_999;
    expect(await check()).toBe('jwks_unavailable');
    clock += 1;
    expect({ code: await check(), fetches: server.requests }).toEqual({ code: 'ok', fetches: 2 });
  });

  it('answers an unknown kid with attestation_invalid again once a fetch succeeds after failures', async () => {
    const server = await serve();
    server.setStatus(500);
    const check = verifierFor({ jwksUrl: server.url });
    expect(await check(stranger)).toBe('jwks_unavailable');
    server.setStatus(200);
    clock += 30_000;
    expect(await check(stranger)).toBe('attestation_invalid');
  });

  it('answers an unknown kid with attestation_invalid when the keys are fresh, jwks_unavailable when the refresh failed', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url });
    expect(await check()).toBe('ok');
    expect(await check(stranger)).toBe('attestation_invalid');
    expect(lastDetail).toBe('no key for this kid in the KYB JWKS');
    server.setStatus(500);
    clock += 30_001;
    expect(await check(stranger)).toBe('jwks_unavailable');
  });
});

describe('the last good keys while refreshes fail', () => {
  it('keep verifying past jwksCacheMaxAgeMs, within jwksMaxStaleMs of the last successful fetch', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url, jwksCacheMaxAgeMs: 50, jwksMaxStaleMs: HOUR, jwksCooldownMs: 10 });
    expect(await check()).toBe('ok');
    server.setStatus(500);
    clock += 51;
    await sleep(60);
    // The refresh is due and fails: the keys fetched 51 ms ago still verify.
    expect({ code: await check(), fetches: server.requests }).toEqual({ code: 'ok', fetches: 2 });
    clock += HOUR - 51;
    expect(await check()).toBe('ok');
  });

  it('stop verifying once jwksMaxStaleMs has passed since the last successful fetch', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url, jwksCacheMaxAgeMs: 10 * MINUTE, jwksMaxStaleMs: HOUR });
    expect(await check()).toBe('ok');
    server.setStatus(500);
    clock += HOUR;
    expect(await check()).toBe('ok');
    clock += 1;
    expect(await check()).toBe('jwks_unavailable');
    expect(lastDetail).toMatch(
      /^the last JWKS fetched is older than attestation\.jwksMaxStaleMs; last fetch: JWKS http:\/\/127\.0\.0\.1:\d+\/\S+ answered HTTP 500/,
    );
  });

  it('default to 12 hours of staleness', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url });
    expect(await check()).toBe('ok');
    server.setStatus(500);
    clock += 12 * HOUR;
    expect(await check()).toBe('ok');
    clock += 30_001;
    expect(await check()).toBe('jwks_unavailable');
  });

  it('are not refetched before jwksCacheMaxAgeMs, however long ago the cooldown ended', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url });
    expect(await check()).toBe('ok');
    clock += 10 * MINUTE - 1;
    expect({ code: await check(), fetches: server.requests }).toEqual({ code: 'ok', fetches: 1 });
  });

  it('are replaced at the normal refresh: one shared fetch for concurrent deliveries, and a removed key stops verifying', async () => {
    const server = await serve();
    const rotated = await createTestSigner({ now: () => clock });
    const check = verifierFor({ jwksUrl: server.url });
    expect(await check()).toBe('ok');
    server.setJwks(rotated.jwks);
    clock += 10 * MINUTE;
    const codes = await Promise.all(Array.from({ length: 30 }, () => check(rotated)));
    expect({ codes: [...new Set(codes)], fetches: server.requests }).toEqual({ codes: ['ok'], fetches: 2 });
    expect(await check(signer)).toBe('attestation_invalid');
  });
});

describe('key selection in a fetched JWKS', () => {
  it('refuses an RSA key under 2048 bits', async () => {
    const small = await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    );
    const jwk = {
      ...(await crypto.subtle.exportKey('jwk', small.publicKey)),
      kid: signer.kid,
      alg: 'RS256',
      use: 'sig',
    };
    const fetcher = countingFetch(async () => Response.json({ keys: [jwk] }));
    const verify = createAttestationVerifier(
      {
        issuer: signer.issuer,
        audience: signer.audience,
        jwksUrl: 'https://kyb.example.test/jwks',
        fetch: fetcher.fetch,
      },
      () => clock,
    );
    // The genuine header and claims, signed by the small key that the JWKS publishes under the genuine kid.
    const envelope = testEvents.dataRequestReleased();
    const signingInput = (await signer.attest(envelope)).split('.').slice(0, 2).join('.');
    const signature = await crypto.subtle.sign(
      'RSASSA-PKCS1-v1_5',
      small.privateKey,
      new TextEncoder().encode(signingInput),
    );
    const token = `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
    const answer = await verify(token, envelope as unknown as EnvelopeIdentity).then(
      () => ({ code: 'ok' }),
      (error: unknown) =>
        error instanceof KybWebhookError ? { code: error.code, detail: error.detail } : { code: String(error) },
    );
    expect(answer).toEqual({
      code: 'attestation_invalid',
      detail: 'the KYB JWKS key for this kid has 1024 bits; RS256 needs at least 2048',
    });
  });

  it('refuses a kid that names several keys', async () => {
    const fetcher = countingFetch(async () =>
      Response.json({ keys: [...signer.jwks.keys, { ...stranger.jwks.keys[0], kid: signer.kid }] }),
    );
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), detail: lastDetail }).toEqual({
      code: 'attestation_invalid',
      detail: 'several keys of the KYB JWKS match this kid',
    });
  });

  it('answers jwks_unavailable (retry later) for a published key under the kid that cannot be imported', async () => {
    const { e: _dropped, ...withoutExponent } = signer.jwks.keys[0] as Record<string, unknown>;
    const fetcher = countingFetch(async () => Response.json({ keys: [withoutExponent] }));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), detail: lastDetail }).toEqual({
      code: 'jwks_unavailable',
      detail: 'the KYB JWKS key for this kid cannot be imported',
    });
  });

  it.each([
    ['an encryption key', { use: 'enc' }],
    ['a key for another algorithm', { alg: 'PS256' }],
    ['a key without verify in key_ops', { key_ops: ['encrypt'] }],
  ])('does not verify with %s', async (_name, change) => {
    const fetcher = countingFetch(async () => Response.json({ keys: [{ ...signer.jwks.keys[0], ...change }] }));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect(await check()).toBe('attestation_invalid');
  });
});

describe('one JWKS fetch is bounded', () => {
  it('refuses a JWKS over jwksMaxBytes (default 256 KiB) and keeps using the last good keys', async () => {
    const server = await serve();
    const check = verifierFor({ jwksUrl: server.url, jwksCacheMaxAgeMs: MINUTE, jwksMaxStaleMs: HOUR });
    expect(await check()).toBe('ok');
    const rotated = await createTestSigner({ now: () => clock });
    server.setJwks({ keys: [...signer.jwks.keys, ...rotated.jwks.keys], padding: 'x'.repeat(256 * 1024) } as never);
    clock += MINUTE;
    expect({ old: await check(), rotated: await check(rotated), fetches: server.requests }).toEqual({
      old: 'ok',
      rotated: 'jwks_unavailable',
      fetches: 2,
    });
  });

  it('accepts a JWKS just under jwksMaxBytes and refuses one just over it', async () => {
    const body = JSON.stringify(signer.jwks);
    // No declared length: the cap is enforced on the bytes read.
    const respond = () => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    const atCap = verifierFor({
      jwksUrl: 'https://kyb.example.test/jwks',
      jwksMaxBytes: body.length,
      fetch: countingFetch(async () => respond()).fetch,
    });
    const underCap = verifierFor({
      jwksUrl: 'https://kyb.example.test/jwks',
      jwksMaxBytes: body.length - 1,
      fetch: countingFetch(async () => respond()).fetch,
    });
    expect({ atCap: await atCap(), underCap: await underCap() }).toEqual({ atCap: 'ok', underCap: 'jwks_unavailable' });
    expect(lastDetail).toBe(
      `no JWKS fetched yet; last fetch: JWKS response is over attestation.jwksMaxBytes (${body.length - 1} bytes)`,
    );
  });

  it('accepts a declared Content-Length equal to jwksMaxBytes', async () => {
    const body = JSON.stringify(signer.jwks);
    const fetcher = countingFetch(
      async () => new Response(body, { status: 200, headers: { 'content-length': String(body.length) } }),
    );
    const check = verifierFor({
      jwksUrl: 'https://kyb.example.test/jwks',
      jwksMaxBytes: body.length,
      fetch: fetcher.fetch,
    });
    expect(await check()).toBe('ok');
  });

  it('reads a JWKS that arrives in many small chunks whole', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(signer.jwks));
    const fetcher = countingFetch(async () => {
      let offset = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + 37));
          offset += 37;
        },
      });
      return new Response(stream, { status: 200 });
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect(await check()).toBe('ok');
  });

  it('counts an answer other than 200 as a failed fetch, even one carrying keys', async () => {
    const fetcher = countingFetch(async () => Response.json(signer.jwks, { status: 203 }));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect(await check()).toBe('jwks_unavailable');
  });

  it('counts a JWKS that is not valid UTF-8 as a failed fetch', async () => {
    const json = new TextEncoder().encode(JSON.stringify({ ...signer.jwks, note: 'XX' }));
    json.set([0xc3, 0x28], json.length - 4); // the two X: an invalid UTF-8 sequence inside a string
    const fetcher = countingFetch(async () => new Response(json, { status: 200 }));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), detail: lastDetail }).toEqual({
      code: 'jwks_unavailable',
      detail: 'no JWKS fetched yet; last fetch: JWKS response is not UTF-8 JSON',
    });
  });

  it('stops reading an oversized body at the cap instead of buffering it whole', async () => {
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    let pulled = 0;
    const fetcher = countingFetch(async () => {
      // 8 MiB of JSON whitespace, produced only as it is read (no declared length).
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (pulled >= 8 * 1024 * 1024) return controller.close();
            pulled += chunk.byteLength;
            controller.enqueue(chunk);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(stream, { status: 200, headers: { 'content-type': 'application/json' } });
    });
    const check = verifierFor({
      jwksUrl: 'https://kyb.example.test/jwks',
      jwksMaxBytes: 64 * 1024,
      fetch: fetcher.fetch,
    });
    expect(await check()).toBe('jwks_unavailable');
    expect(pulled).toBeLessThanOrEqual(64 * 1024 + 2 * chunk.byteLength);
  });

  it('refuses a declared Content-Length over the cap without reading the body', async () => {
    let pulled = 0;
    const fetcher = countingFetch(async () => {
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulled += 1;
            controller.enqueue(new TextEncoder().encode(JSON.stringify(signer.jwks)));
            controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(stream, { status: 200, headers: { 'content-length': String(10 * 1024 * 1024) } });
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), pulled }).toEqual({ code: 'jwks_unavailable', pulled: 0 });
    expect(lastDetail).toBe(
      `no JWKS fetched yet; last fetch: JWKS response declares ${10 * 1024 * 1024} bytes, over attestation.jwksMaxBytes (${256 * 1024})`,
    );
  });

  it('times out a fetch that never answers after jwksTimeoutMs, even one that ignores its AbortSignal', async () => {
    const fetcher = countingFetch(() => new Promise<Response>(() => {}));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', jwksTimeoutMs: 200, fetch: fetcher.fetch });
    const started = performance.now();
    const code = await Promise.race([check(), sleep(3_000).then(() => 'still waiting after 3 s')]);
    expect({ code, fast: performance.now() - started < 2_000 }).toEqual({ code: 'jwks_unavailable', fast: true });
    expect(lastDetail).toBe('no JWKS fetched yet; last fetch: JWKS fetch timed out (attestation.jwksTimeoutMs)');
  });

  it('times out a body that stops arriving', async () => {
    const fetcher = countingFetch(async () => {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"keys":['));
        },
        // Never more data, never closed.
        pull: () => new Promise(() => {}),
      });
      return new Response(stream, { status: 200 });
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', jwksTimeoutMs: 200, fetch: fetcher.fetch });
    const code = await Promise.race([check(), sleep(3_000).then(() => 'still waiting after 3 s')]);
    expect(code).toBe('jwks_unavailable');
  });

  it('passes the AbortSignal to fetch, asks for JSON and follows no redirect', async () => {
    let seen: RequestInit | undefined;
    const fetcher = countingFetch(async (_url, init) => {
      seen = init;
      return new Response(null, { status: 302, headers: { location: 'http://evil.example/jwks' } });
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect(await check()).toBe('jwks_unavailable');
    expect({
      signal: seen?.signal instanceof AbortSignal,
      redirect: seen?.redirect,
      accept: new Headers(seen?.headers).get('accept'),
      calls: fetcher.calls,
    }).toEqual({ signal: true, redirect: 'manual', accept: 'application/json, application/jwk-set+json', calls: 1 });
  });

  it('counts a malformed JWKS document as a failed fetch', async () => {
    const fetcher = countingFetch(async () => new Response('{"keys":"none"}', { status: 200 }));
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ first: await check(), second: await check(), calls: fetcher.calls }).toEqual({
      first: 'jwks_unavailable',
      second: 'jwks_unavailable',
      calls: 1,
    });
  });
});

describe('the AbortSignal handed to fetch', () => {
  /**
   * Counts the abort listeners added to `signal` and not removed since. A fetch implementation keeps the signal as
   * long as it likes, and Node prints a MaxListenersExceededWarning once 11 abort listeners pile up on one.
   */
  function abortListenersOn(signal: AbortSignal): () => number {
    const active = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((type: string, listener: EventListener, options?: AddEventListenerOptions) => {
      if (type === 'abort') active.add(listener);
      add(type, listener, options);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((type: string, listener: EventListener, options?: EventListenerOptions) => {
      if (type === 'abort') active.delete(listener);
      remove(type, listener, options);
    }) as typeof signal.removeEventListener;
    return () => active.size;
  }

  it('keeps none of the verifier’s listeners once a JWKS read in 40 chunks has verified a delivery', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(signer.jwks));
    const size = Math.ceil(bytes.length / 40);
    let listeners = () => -1;
    const fetcher = countingFetch(async (_url, init) => {
      listeners = abortListenersOn(init!.signal!);
      let offset = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + size));
          offset += size;
        },
      });
      return new Response(stream, { status: 200 });
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), listeners: listeners() }).toEqual({ code: 'ok', listeners: 0 });
  });

  it('keeps none of the verifier’s listeners once a fetch has failed', async () => {
    let listeners = () => -1;
    const fetcher = countingFetch((_url, init) => {
      listeners = abortListenersOn(init!.signal!);
      return Promise.reject(new TypeError('fetch failed'));
    });
    const check = verifierFor({ jwksUrl: 'https://kyb.example.test/jwks', fetch: fetcher.fetch });
    expect({ code: await check(), listeners: listeners() }).toEqual({ code: 'jwks_unavailable', listeners: 0 });
  });
});
