/**
 * The login server's key set (spec 4.1: fetched at start-up and cached): jose's remote set, refreshed when older than
 * jose's cache age (10 minutes) and on a token naming an unknown `kid` (at most once per cooldown), so that a key the
 * login server withdraws stops verifying within minutes. While refreshes fail, the last good set keeps verifying the
 * keys it holds, for at most {@link MAX_STALE_MS} after its fetch: an outage of the key set's address must not
 * refuse every valid token, nor keep a withdrawn key trusted for long. After a failed refresh the address is not asked
 * again for a cooldown, so that requests do not each wait out a failing fetch.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
} from 'jose';

/**
 * How long after the last successful fetch the login key set still verifies while every refresh fails: 12 hours, as
 * the receiver's attestation key set (`maxStaleMs`).
 *
 * @example
 * ```ts
 * MAX_STALE_MS // 43_200_000
 * ```
 */
export const MAX_STALE_MS = 12 * 3_600_000;

/**
 * The key lookup jose's `jwtVerify` takes, and `reload` for the fetch at start-up.
 *
 * @example
 * ```ts
 * const keys = loginKeys({ jwksUri, cooldownMs: 30_000, fetch: undefined })
 * await keys.reload()
 * await jwtVerify(token, keys.getKey, { algorithms: ['RS256'] })
 * ```
 */
export interface LoginKeys {
  getKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey>;
  reload(): Promise<void>;
}

/**
 * The login key set of `jwksUri`, with the last good set kept through failed refreshes (see the file's comment).
 *
 * @example
 * ```ts
 * const keys = loginKeys({ jwksUri: server.jwks_uri, cooldownMs: 30_000, fetch: undefined })
 * ```
 */
export function loginKeys(options: {
  jwksUri: string;
  cooldownMs: number;
  /** How long a JWKS fetch may take (the login's `timeoutSeconds`); jose's own default is 5 s. */
  timeoutMs?: number | undefined;
  fetch: typeof fetch | undefined;
}): LoginKeys {
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let failedAt = Number.NEGATIVE_INFINITY;
  let failure: unknown;
  const remote = createRemoteJWKSet(new URL(options.jwksUri), {
    cooldownDuration: options.cooldownMs,
    ...(options.timeoutMs === undefined ? {} : { timeoutDuration: options.timeoutMs }),
    [customFetch]: jwksFetch(options.fetch, () => (fetchedAt = Date.now())),
  });
  /** The last good set, when it is recent enough to stand in for a refresh that failed. */
  const lastGood = () => (Date.now() - fetchedAt < MAX_STALE_MS ? remote.jwks() : undefined);
  const fromLastGood = async (header: JWSHeaderParameters, token: FlattenedJWSInput, set: object) => {
    try {
      return await createLocalJWKSet(set as Parameters<typeof createLocalJWKSet>[0])(header, token);
    } catch (error) {
      // A kid the last good set lacks may be a rotation the failed refresh would have brought: unavailable, not forged.
      throw error instanceof joseErrors.JWKSNoMatchingKey ? failure : error;
    }
  };
  return {
    reload: () => remote.reload(),
    async getKey(header, token) {
      const set = lastGood();
      if (set && Date.now() - failedAt < options.cooldownMs) return fromLastGood(header, token, set);
      try {
        return await remote(header, token);
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        failedAt = Date.now();
        failure = error;
        if (set) return fromLastGood(header, token, set);
        throw error;
      }
    },
  };
}

/** A failure to get the key set (not a refusal of the token). */
function isUnavailable(error: unknown): boolean {
  return (
    error instanceof JwksFetchFailed ||
    error instanceof joseErrors.JWKSTimeout ||
    error instanceof joseErrors.JWKSInvalid
  );
}

/**
 * The JWKS could not be had: the request failed, or the answer was not a 200 with JSON. jose reports a non-200 as a
 * plain JOSEError, the class of every token refusal too, so the fetch it is given throws this instead: key
 * retrieval is then told from a bad token by class, not by jose's message text.
 */
export class JwksFetchFailed extends Error {
  override readonly name = 'JwksFetchFailed';
}

/** The fetch jose uses for the JWKS (the configured one, or the global one), with its failures made a JwksFetchFailed. */
function jwksFetch(custom: typeof fetch | undefined, fetched: () => void): typeof fetch {
  return async (input, init) => {
    let response: Response;
    let body: string;
    try {
      response = await (custom ?? fetch)(input, init);
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new JwksFetchFailed(`the login JWKS answered HTTP ${response.status}`);
      }
      body = await response.text();
    } catch (error) {
      if (error instanceof JwksFetchFailed) throw error;
      throw new JwksFetchFailed(`fetching the login JWKS failed (${safeName(error)})`, { cause: error });
    }
    let set: unknown;
    try {
      set = JSON.parse(body);
    } catch {
      throw new JwksFetchFailed('the login JWKS is not JSON');
    }
    if (!Array.isArray((set as { keys?: unknown } | null)?.keys))
      throw new JwksFetchFailed('the login JWKS is not a key set');
    fetched();
    return new Response(body, { status: 200, headers: response.headers });
  };
}

/** An error's name when it is a plain word (never its message, which may quote a URL or a value). */
export function safeName(error: unknown): string {
  const name = (error as Error | undefined)?.name;
  return typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'error';
}
