// jose's subpaths, not its root: the root loads 46 modules (JWE, JWT signing, key generation), about 95 M instructions
// at import on Node; these two load 8 (bench: `--only insn`).
import * as joseErrors from 'jose/errors';
import { createLocalJWKSet } from 'jose/jwks/local';
import type { JSONWebKeySet, JWK } from 'jose';
import { KybWebhookError, rejection } from '../errors.js';
import { TRACING_CHANNELS, tracingChannelsOf, type JwksTrace } from '../telemetry/channels.js';
import { Observers, type ReceiverTelemetry } from '../telemetry/observers.js';

/** Smallest RSA modulus accepted for RS256, in bits (RFC 7518 §3.3; jose refuses smaller keys too). */
export const MIN_RSA_MODULUS_BITS = 2048;

/** A verification key and the exact length its RS256 signatures must have (RFC 8017 §8.2.2 step 1). */
export interface VerificationKey {
  readonly key: CryptoKey;
  readonly signatureBytes: number;
}

/**
 * Where the attestation verifier gets its keys. `peek` answers synchronously from memory (the hot path, no
 * microtask); `get` may fetch and throws a {@link KybWebhookError}: `attestation_invalid` when the kid names no
 * usable key, `jwks_unavailable` when the keys cannot be known right now.
 *
 * @example
 * ```ts
 * const keys = createInlineKeySource(jwks)
 * const key = keys.peek(kid) ?? (await keys.get(kid))
 * ```
 */
export interface KeySource {
  peek(kid: string): VerificationKey | undefined;
  get(kid: string): Promise<VerificationKey>;
  /**
   * How many keys the set holds, fetched now when it comes from a URL (or the cached set while fetches cool down):
   * a start-up check. Throws `jwks_unavailable`, naming the URL and what failed, when no set can be had.
   */
  check(): Promise<number>;
}

/** Options of {@link createRemoteKeySource}; the defaults are applied by the caller. */
export interface RemoteKeySourceOptions {
  url: URL;
  fetch?: typeof fetch | undefined;
  cooldownMs: number;
  cacheMaxAgeMs: number;
  maxStaleMs: number;
  timeoutMs: number;
  maxBytes: number;
  /** The receiver's `telemetry`: each fetch is its `jwks` operation (and the `kyb-webhooks:jwks` channel's). */
  telemetry?: ReceiverTelemetry | undefined;
}

type Lookup = ReturnType<typeof createLocalJWKSet>;

/** One successfully fetched (or inline) key set and the keys imported from it so far. */
interface KeySet {
  readonly lookup: Lookup;
  // Only keys some delivery asked for and jose found, so at most one entry per key of the set: bounded by the set,
  // itself bounded by jwksMaxBytes. Replaced with the set, so a key removed from the JWKS goes with the refresh.
  readonly imported: Map<string, VerificationKey>;
  readonly fetchedAt: number;
  /** How many keys the document listed. */
  readonly size: number;
}

const NOT_FOUND = Symbol('not found');

/**
 * `attestation_invalid` because the key set has no key for the token's `kid`, checked against keys that are current:
 * the inline set, or a JWKS fetched successfully during this very lookup. For an event fetched from the API that
 * means its signing key was retired (ordering reports it as unfillable, `key_retired`). An unknown kid checked only
 * against a cached set (a refresh not allowed yet) is a plain `attestation_invalid`: the key may be newer than the
 * cache, and a retry after the cooldown finds it.
 *
 * @example
 * ```ts
 * if (error instanceof UnknownKidError) console.warn('signed by a key the KYB JWKS no longer publishes')
 * ```
 */
export class UnknownKidError extends KybWebhookError {
  constructor(detail: string) {
    super('attestation_invalid', undefined, { detail });
  }
}

/** Whether a call waited for a fetch: none allowed, one that completed, or one it stopped waiting for. */
type Attempt = 'none' | 'completed' | 'gave-up';

/**
 * Keys from an inline JWKS (`attestation.jwks`). Key selection is jose's `createLocalJWKSet`: only RSA keys usable
 * for RS256 signatures (kty RSA, use sig or absent, alg RS256 or absent, key_ops with verify or absent) count.
 *
 * @example
 * ```ts
 * const keys = createInlineKeySource({ keys: [publicJwk] })
 * ```
 */
export function createInlineKeySource(jwks: JSONWebKeySet): KeySource {
  let set: KeySet;
  try {
    set = newKeySet(jwks, 0);
  } catch (cause) {
    throw new KybWebhookError('config_invalid', 'attestation.jwks is not a JSON Web Key Set ({ keys: [ ... ] }).', {
      cause,
    });
  }
  // A set jose finds no RS256 key in refuses every attestation (401) until the endpoint is quarantined: say so now.
  if (!jwks.keys.some(isUsableRs256Jwk)) {
    throw new KybWebhookError(
      'config_invalid',
      'attestation.jwks has no key usable for RS256 attestations: each needs kty "RSA", a kid, alg "RS256" or none, ' +
        'use "sig" or none, and key_ops with "verify" or none. Use the keys of {base_url}/.well-known/kyb-jwks.json.',
    );
  }
  return {
    peek: (kid) => set.imported.get(kid),
    check: () => Promise.resolve(set.size),
    async get(kid) {
      const found = await findKey(set, kid);
      if (found === NOT_FOUND) throw new UnknownKidError('no key for this kid in attestation.jwks');
      return found;
    },
  };
}

/**
 * Keys from the KYB JWKS URL, kept usable while the service's JWKS host fails:
 * - fetched on first use and refreshed when older than `cacheMaxAgeMs`; an unknown kid refetches early;
 * - after any fetch, successful or not, no other starts for `cooldownMs`, so neither an outage nor a flood of
 *   unknown kids turns into a flood of fetches; concurrent deliveries share the fetch in flight;
 * - while refreshes fail, the last good set keeps verifying the kids it has until `maxStaleMs` after the last
 *   successful fetch; past that, or for a kid it lacks, deliveries get `jwks_unavailable` (503, retried later);
 * - one fetch times out after `timeoutMs` (AbortSignal), reads at most `maxBytes` of body and follows no redirect.
 *
 * `now` is the receiver's clock, so tests can move time.
 *
 * @example
 * ```ts
 * const keys = createRemoteKeySource({ url, cooldownMs: 30_000, cacheMaxAgeMs: 600_000, maxStaleMs: 43_200_000,
 *   timeoutMs: 5_000, maxBytes: 262_144 }, Date.now)
 * ```
 */
export function createRemoteKeySource(options: RemoteKeySourceOptions, now: () => number): KeySource {
  const fetchImpl = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  let set: KeySet | undefined;
  let inFlight: Promise<void> | undefined;
  let nextFetchAt = -Infinity;
  let lastFetchFailed = false;
  let lastFailure: unknown;
  const observers = new Observers('jwks', jwksChannels, options.telemetry);
  const download = (): Promise<Downloaded> => {
    if (!observers.active) return downloadKeySet(options, fetchImpl);
    const trace: JwksTrace = { url: shownUrl(options.url) };
    return observers.run(trace, () => downloadKeySet(options, fetchImpl, trace));
  };

  /** Starts a fetch, or joins the one in flight. Never rejects: the outcome is in the state. */
  function refresh(): Promise<void> {
    inFlight ??= download()
      .then(
        ({ lookup, size }) => {
          set = keySetOf(lookup, now(), size);
          lastFetchFailed = false;
          lastFailure = undefined;
        },
        (cause: unknown) => {
          lastFetchFailed = true;
          lastFailure = cause;
        },
      )
      .finally(() => {
        nextFetchAt = now() + options.cooldownMs;
        inFlight = undefined;
      });
    return inFlight;
  }

  /** Waits for a fetch when one is running or allowed to start. */
  async function refreshIfAllowed(): Promise<Attempt> {
    if (inFlight === undefined && now() < nextFetchAt) return 'none';
    if (inFlight === undefined) {
      await refresh();
      return 'completed';
    }
    // Joining a fetch another delivery started: on Cloudflare Workers that delivery's I/O is cancelled if its request
    // ends first, so the wait is bounded by a timer of this delivery's own (elsewhere the fetch's timeout comes first).
    return (await settlesWithin(inFlight, options.timeoutMs)) ? 'completed' : 'gave-up';
  }

  function unavailable(why: string): KybWebhookError {
    const failure = lastFetchFailed ? `; last fetch: ${describeFailure(lastFailure)}` : '';
    return rejection('jwks_unavailable', `${why}${failure}`, lastFetchFailed ? lastFailure : undefined);
  }

  return {
    peek(kid) {
      if (set === undefined || now() - set.fetchedAt >= options.cacheMaxAgeMs) return undefined;
      return set.imported.get(kid);
    },

    async check() {
      await refreshIfAllowed();
      if (lastFetchFailed) throw unavailable(`the JWKS ${shownUrl(options.url)} could not be fetched`);
      if (set === undefined) throw unavailable(`no JWKS fetched yet from ${shownUrl(options.url)}`);
      return set.size;
    },

    async get(kid) {
      let attempt: Attempt = 'none';
      if (set === undefined || now() - set.fetchedAt >= options.cacheMaxAgeMs) attempt = await refreshIfAllowed();
      const current = set;
      if (current === undefined) throw unavailable('no JWKS fetched yet');
      if (now() - current.fetchedAt > options.maxStaleMs) {
        throw unavailable('the last JWKS fetched is older than attestation.jwksMaxStaleMs');
      }
      const found = await findKey(current, kid);
      if (found !== NOT_FOUND) return found;
      // An unknown kid may be a key the service rotated in since the last fetch: look once more, if allowed.
      if (attempt === 'none') {
        attempt = await refreshIfAllowed();
        if (set !== current && set !== undefined) {
          const again = await findKey(set, kid);
          if (again !== NOT_FOUND) return again;
        }
      }
      // Keys we could not refresh may lack this kid: the service should retry rather than give up on it.
      if (lastFetchFailed || attempt === 'gave-up') {
        throw unavailable('no key for this kid in the last good JWKS and no refresh succeeded');
      }
      // Refreshed during this lookup and still missing: the service no longer publishes the key.
      if (attempt === 'completed') throw new UnknownKidError('no key for this kid in the KYB JWKS');
      throw rejection('attestation_invalid', 'no key for this kid in the KYB JWKS');
    },
  };
}

/**
 * Whether jose's key selection (createLocalJWKSet) could pick this key for an RS256 token with a kid, the only tokens
 * the verifier looks keys up for. Its modulus length is checked when it is imported (findKey).
 */
function isUsableRs256Jwk(jwk: JWK): boolean {
  const keyOps: unknown = jwk.key_ops;
  return (
    jwk.kty === 'RSA' &&
    typeof jwk.kid === 'string' &&
    (jwk.alg === undefined || jwk.alg === 'RS256') &&
    (jwk.use === undefined || jwk.use === 'sig') &&
    (keyOps === undefined || (Array.isArray(keyOps) && keyOps.includes('verify')))
  );
}

function newKeySet(jwks: unknown, fetchedAt: number): KeySet {
  return keySetOf(createLocalJWKSet(jwks as JSONWebKeySet), fetchedAt, (jwks as JSONWebKeySet).keys.length);
}

function keySetOf(lookup: Lookup, fetchedAt: number, size: number): KeySet {
  return { lookup, imported: new Map(), fetchedAt, size };
}

/** A JWKS as one download gives it: jose's lookup over it, and how many keys it listed. */
interface Downloaded {
  lookup: Lookup;
  size: number;
}

async function findKey(set: KeySet, kid: string): Promise<VerificationKey | typeof NOT_FOUND> {
  const known = set.imported.get(kid);
  if (known) return known;
  let key: CryptoKey;
  try {
    key = await set.lookup({ alg: 'RS256', kid });
  } catch (cause) {
    if (cause instanceof joseErrors.JWKSNoMatchingKey) return NOT_FOUND;
    if (cause instanceof joseErrors.JWKSMultipleMatchingKeys) {
      throw rejection('attestation_invalid', 'several keys of the KYB JWKS match this kid', cause);
    }
    // A published key that cannot be imported is the service's mistake; a retry may find it fixed.
    throw rejection('jwks_unavailable', 'the KYB JWKS key for this kid cannot be imported', cause);
  }
  const { modulusLength } = key.algorithm as RsaHashedKeyAlgorithm;
  if (!(modulusLength >= MIN_RSA_MODULUS_BITS)) {
    throw rejection(
      'attestation_invalid',
      `the KYB JWKS key for this kid has ${modulusLength} bits; RS256 needs at least ${MIN_RSA_MODULUS_BITS}`,
    );
  }
  const found: VerificationKey = Object.freeze({ key, signatureBytes: Math.ceil(modulusLength / 8) });
  set.imported.set(kid, found);
  return found;
}

const jwksChannels = tracingChannelsOf(TRACING_CHANNELS.jwks);

/**
 * One GET of the JWKS: status 200, at most maxBytes of body read, UTF-8 JSON, all within timeoutMs. The status and
 * the number of keys go into `trace` when the fetch is watched.
 */
async function downloadKeySet(
  options: RemoteKeySourceOptions,
  fetchImpl: typeof fetch,
  trace?: JwksTrace,
): Promise<Downloaded> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const response = await untilAborted(
    fetchImpl(options.url, {
      method: 'GET',
      signal,
      // A redirect could lead anywhere (plain http, another host): the URL configured is the only source of keys.
      redirect: 'manual',
      headers: { accept: 'application/json, application/jwk-set+json' },
    }),
    signal,
    // A fetch that ignored the signal and answers after the timeout: its body is never wanted.
    (late) => void late.body?.cancel().catch(() => {}),
  );
  if (trace) trace.status = response.status;
  if (response.status !== 200) {
    void response.body?.cancel().catch(() => {});
    throw new Error(`JWKS ${shownUrl(options.url)} answered HTTP ${response.status}, expected 200`);
  }
  const bytes = await readCapped(response, options.maxBytes, signal);
  let jwks: unknown;
  try {
    jwks = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (cause) {
    throw new Error('JWKS response is not UTF-8 JSON', { cause });
  }
  // Throws for a malformed document, which then counts as a failed fetch and keeps the last good set.
  const lookup = createLocalJWKSet(jwks as JSONWebKeySet);
  const size = (jwks as JSONWebKeySet).keys.length;
  if (trace) trace.keys = size;
  return { lookup, size };
}

/** Reads the body as a stream and gives up as soon as it passes maxBytes: an oversized JWKS is never buffered. */
async function readCapped(response: Response, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new Error(`JWKS response declares ${declared} bytes, over attestation.jwksMaxBytes (${maxBytes})`);
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        void reader.cancel().catch(() => {});
        throw new Error(`JWKS response is over attestation.jwksMaxBytes (${maxBytes} bytes)`);
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Whether `promise` (which never rejects) settles within `ms`; the timer is cleared as soon as it does. */
function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Settles like `promise`, or rejects when `signal` aborts first: an injected fetch may ignore its signal. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, discardLate?: (value: T) => void): Promise<T> {
  if (signal.aborted) return Promise.reject(timeoutError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timeoutError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) discardLate?.(value);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function timeoutError(signal: AbortSignal): Error {
  return new Error('JWKS fetch timed out (attestation.jwksTimeoutMs)', { cause: signal.reason });
}

function describeFailure(cause: unknown): string {
  // A platform's or a custom fetch's message may quote a URL whole (credentials, a query with a token): shown without.
  return cause instanceof Error ? cause.message.replace(URL_IN_TEXT, (found) => shownUrl(found)) : 'unknown error';
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/** The JWKS URL as a log line shows it: origin and path, without credentials or query (whatever was put there). */
function shownUrl(url: string | URL): string {
  try {
    const parsed = new URL(String(url));
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(the configured URL)';
  }
}
