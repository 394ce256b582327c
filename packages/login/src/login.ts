import * as oidc from 'openid-client';
import { readCookie, readCookies, serializeCookie } from './cookies.js';
import { KybLoginError, loginError } from './errors.js';
import { validateLoginOptions, type LoginOptions } from './options.js';
import { safeReturnPath } from './return-path.js';
import { Sealer } from './sealed.js';
import { TokenVerifier, type VerifiedClaims, type VerifiedUser } from './tokens.js';
import type { LoginTransaction } from './transaction-store.js';

/**
 * The token response of spec 2.2, typed.
 *
 * @example
 * ```ts
 * const { tokens } = await login.finish(request)
 * await fetch(apiUrl, { headers: { authorization: `Bearer ${tokens.accessToken}` } })
 * ```
 */
export interface LoginTokens {
  accessToken: string;
  idToken: string;
  /** Present when offline_access was granted. */
  refreshToken?: string;
  /** Seconds the access token lives, as the server said. */
  expiresIn: number;
  tokenType: 'bearer';
  /** The granted scopes, when the server listed them. */
  scope?: string;
}

/**
 * A completed sign-in (sign-up and login are one operation, spec 1.2).
 *
 * @example
 * ```ts
 * const { userId, isNewUser } = await login.exchangeCode({ code, codeVerifier })
 * if (isNewUser) await sendWelcome(userId)
 * ```
 */
export interface LoginResult {
  /** The stable user id: the ID token's `sub` without `svcid:`. */
  userId: string;
  /** `upsertUser`'s answer: true the first time this id signs in. Undefined without `upsertUser`. */
  isNewUser: boolean | undefined;
  tokens: LoginTokens;
  /** The verified ID token claims. */
  claims: VerifiedClaims;
}

/**
 * What a login route needs from a request, whatever the framework.
 *
 * @example
 * ```ts
 * const request: LoginRequest = { url: req.originalUrl, header: (name) => req.get(name), encrypted: req.secure }
 * ```
 */
export interface LoginRequest {
  /** Path and query as received, e.g. `/auth/callback?code=…&state=…`. */
  url: string;
  header(name: string): string | undefined;
  /** Whether the connection to this server is TLS. */
  encrypted: boolean;
}

/**
 * The start of a login: where to send the browser, and the cookie that remembers the transaction.
 *
 * @example
 * ```ts
 * const { url, setCookie } = await login.start(request, { returnTo: '/account' })
 * res.setHeader('set-cookie', setCookie).redirect(url.href)
 * ```
 */
export interface LoginStart {
  url: URL;
  setCookie: string;
}

/**
 * Signs users in with the service's login server. Create it once at start-up with {@link createLogin}; the framework
 * mounts (`@kyb-webhooks/login/express`, `/fastify`, `/koa`, `/hono`) wrap it in routes.
 *
 * @example
 * ```ts
 * const login: Login = await createLogin(options)
 * const { userId } = await login.verifyAccessToken(bearerToken)
 * ```
 */
export interface Login {
  /** The issuer of the discovery document: the only accepted `iss`. */
  readonly issuer: string;
  /** The redirect URI the login uses for a request (resolved per request when configured as a path). */
  redirectUriFor(request: LoginRequest): string;
  /** Starts a login: the authorization URL with every parameter of spec 4.1, and the transaction cookie. */
  start(request: LoginRequest, options?: { returnTo?: string }): Promise<LoginStart>;
  /**
   * Completes a login on the callback request: the transaction cookie of the callback's state read, its state
   * compared, and only then used up; the callback's `code` and `iss` checked, the code exchanged (HTTP Basic for a
   * confidential client), the ID token verified. Resolves with the result and the path to return to; the cookie to
   * clear the transaction is in `setCookie` (on failure, {@link Login.clearTransactionCookie}; see {@link KybLoginError}).
   */
  finish(request: LoginRequest): Promise<LoginResult & { returnTo: string; setCookie: string }>;
  /**
   * The Set-Cookie value that clears the transaction cookie of the callback's `state` (after a failed callback). Each
   * login has its own cookie, named after its state, so logins started in several tabs do not undo each other.
   */
  clearTransactionCookie(request: LoginRequest): string;
  /**
   * Set-Cookie values that clear the transaction cookies of logins this browser abandoned, on the callback request:
   * all but the newest few beside the callback's own, so abandoned logins cannot pile up cookies until they expire.
   */
  staleTransactionCookies(request: LoginRequest): Promise<string[]>;
  /**
   * The backend exchange the spec recommends for browser apps: the browser did the redirect with its own PKCE
   * verifier and hands the code and verifier to the backend, which exchanges them with the client secret.
   */
  exchangeCode(input: { code: string; codeVerifier: string; nonce?: string; redirectUri?: string; iss?: string }): Promise<LoginResult>;
  /**
   * Uses a refresh token; resolves with the new tokens (the refresh token is the new one, or the same if not rotated).
   * A refresh answer may come without an ID token (OIDC Core 12.2): then `tokens.idToken`, `userId` and `claims` are
   * undefined; with one, it is verified like at sign-in and they are its.
   */
  refresh(refreshToken: string): Promise<{
    tokens: Omit<LoginTokens, 'idToken'> & { idToken?: string };
    userId: string | undefined;
    claims: VerifiedClaims | undefined;
  }>;
  /** Verifies an ID token: signature by the login JWKS, pinned algorithm, issuer, audience = client id, times, `svcid:`. */
  verifyIdToken(idToken: string, options?: { nonce?: string }): Promise<VerifiedUser>;
  /** Verifies a JWT access token for the configured audience (bearer tokens on API routes). */
  verifyAccessToken(accessToken: string): Promise<VerifiedUser>;
  /** The session cookie for a user (set by the login routes after a sign-in). */
  sessionCookie(request: LoginRequest, userId: string): Promise<string>;
  /** The Set-Cookie value that signs the user out. */
  clearSessionCookie(request: LoginRequest): string;
  /** The signed-in user id from the session cookie, or undefined. */
  sessionUser(request: LoginRequest): Promise<string | undefined>;
  /** Whether the login routes keep a session cookie. */
  readonly sessions: boolean;
}

const DEFAULTS = {
  idTokenAlgorithm: 'RS256',
  clockToleranceSeconds: 30,
  jwksCooldownMs: 30_000,
  transactionTtlSeconds: 600,
  sessionMaxAgeSeconds: 8 * 3600,
  timeoutSeconds: 30,
} as const;

/** Used transaction ids are remembered until the transaction's expiry; bounded. */
const MAX_USED_TRANSACTIONS = 100_000;

/**
 * Transaction cookies of other logins a callback leaves in place (tabs still signing in). The cookies only reach
 * the callback path, so this is the one place that sees them all; beyond these, the oldest are cleared there.
 */
const MAX_OTHER_PENDING_LOGINS = 4;

/** The most a browser keeps of a cookie's name and value together (RFC 6265bis 5.6; Chrome and Firefox enforce it). */
const MAX_COOKIE_BYTES = 4096;

/**
 * Creates the login: checks the options (`config_invalid` with the fix), runs discovery from `authUrl` by issuer
 * (the document must name exactly that issuer) and fetches the login JWKS, so a misconfiguration fails at start-up.
 *
 * @example
 * ```ts
 * import { createLogin } from '@kyb-webhooks/login'
 *
 * const login = await createLogin({
 *   authUrl: process.env.KYB_AUTH_URL!,
 *   clientId: process.env.KYB_CLIENT_ID!,
 *   clientSecret: process.env.KYB_CLIENT_SECRET || undefined, // unset: a public client (PKCE alone)
 *   redirectUri: 'https://shop.example/auth/callback',
 *   audience: 'https://api.shop.example',
 *   secret: process.env.LOGIN_COOKIE_SECRET!,
 *   upsertUser: async (userId) => (await db.users.insertIgnore({ id: userId })).inserted,
 * })
 * ```
 */
export async function createLogin(options: LoginOptions): Promise<Login> {
  validateLoginOptions(options);
  const algorithm = options.idTokenAlgorithm ?? DEFAULTS.idTokenAlgorithm;
  const tolerance = options.clockToleranceSeconds ?? DEFAULTS.clockToleranceSeconds;
  const transactionTtl = options.transactionTtlSeconds ?? DEFAULTS.transactionTtlSeconds;
  const sessionMaxAge = options.session === false ? 0 : (options.session?.maxAgeSeconds ?? DEFAULTS.sessionMaxAgeSeconds);
  const confidential = options.clientSecret !== undefined;

  const metadata: Partial<oidc.ClientMetadata> = {
    client_id: options.clientId,
    response_types: ['code'],
    id_token_signed_response_alg: algorithm,
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    [oidc.clockTolerance]: tolerance,
  };
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(
      new URL(options.authUrl),
      options.clientId,
      metadata,
      // openid-client's default would be client_secret_post; the service wants HTTP Basic (spec 5.1).
      confidential ? oidc.ClientSecretBasic(options.clientSecret) : oidc.None(),
      {
        execute: options.allowInsecureRequests ? [oidc.allowInsecureRequests] : [],
        timeout: options.timeoutSeconds ?? DEFAULTS.timeoutSeconds,
        ...(options.fetch ? { [oidc.customFetch]: fetchFor(options.fetch) } : {}),
      },
    );
  } catch (error) {
    throw discoveryError(error);
  }
  const server = config.serverMetadata();
  if (!server.jwks_uri || !server.token_endpoint || !server.authorization_endpoint) {
    throw loginError('discovery_failed', 'the discovery document lacks jwks_uri, token_endpoint or authorization_endpoint');
  }
  const verifier = new TokenVerifier({
    issuer: server.issuer,
    jwksUri: server.jwks_uri,
    clientId: options.clientId,
    audience: options.audience,
    algorithm,
    clockToleranceSeconds: tolerance,
    jwksCooldownMs: options.jwksCooldownMs ?? DEFAULTS.jwksCooldownMs,
    fetch: options.fetch,
  });
  // Spec 4.1: fetch the JWKS at start-up and cache it.
  try {
    await verifier.jwks.reload();
  } catch {
    throw loginError('jwks_unavailable', 'the login JWKS could not be fetched at start-up');
  }

  const transactions = new Sealer(options.secret, 'kyb-login transaction v1');
  const sessions = new Sealer(options.secret, 'kyb-login session v1');
  const usedTransactions = new Map<string, number>();
  const scope = ['openid', 'offline', 'offline_access', ...(options.business ? ['business'] : [])].join(' ');

  const redirectUriFor = (request: LoginRequest): string => {
    if (!options.redirectUri.startsWith('/')) return options.redirectUri;
    return new URL(options.redirectUri, requestOrigin(request, options.trustProxy === true)).href;
  };
  const secureFor = (request: LoginRequest): boolean =>
    options.cookies?.secure ?? new URL(redirectUriFor(request)).protocol === 'https:';
  const transactionCookiePrefix = (secure: boolean): string =>
    `${options.cookies?.transactionName ?? (secure ? '__Secure-kyb-login-tx' : 'kyb-login-tx')}-`;
  // One cookie per login, named after its state, so a second tab's login does not overwrite the first one's.
  const transactionCookieName = (secure: boolean, state: string): string => transactionCookiePrefix(secure) + stateTag(state);
  /** The transaction cookies a request carries, as [name, value]. */
  const transactionCookies = (request: LoginRequest, secure: boolean): Array<[string, string]> => {
    const prefix = transactionCookiePrefix(secure);
    return readCookies(request.header('cookie')).filter(([name]) => name.startsWith(prefix) && STATE_TAG.test(name.slice(prefix.length)));
  };
  const sessionCookieName = (secure: boolean): string =>
    options.cookies?.sessionName ?? (secure ? '__Host-kyb-login-session' : 'kyb-login-session');
  // The transaction cookie goes only to the callback path, so it is sent nowhere else.
  const transactionCookiePath = (request: LoginRequest): string => new URL(redirectUriFor(request)).pathname;

  const tokensOf = (response: oidc.TokenEndpointResponse, previousRefreshToken?: string): Omit<LoginTokens, 'idToken'> & { idToken?: string } => {
    if ((response.token_type ?? '').toLowerCase() !== 'bearer') throw loginError('token_invalid', 'token_type is not bearer');
    if (response.id_token !== undefined && typeof response.id_token !== 'string') throw loginError('token_invalid', 'the id_token is not a string');
    const refreshToken = response.refresh_token ?? previousRefreshToken;
    return {
      accessToken: response.access_token,
      ...(response.id_token !== undefined ? { idToken: response.id_token } : {}),
      ...(refreshToken ? { refreshToken } : {}),
      expiresIn: typeof response.expires_in === 'number' ? response.expires_in : 0,
      tokenType: 'bearer',
      ...(typeof response.scope === 'string' ? { scope: response.scope } : {}),
    };
  };

  const complete = async (response: oidc.TokenEndpointResponse, nonce: string | undefined): Promise<LoginResult> => {
    const { idToken, ...rest } = tokensOf(response);
    if (idToken === undefined) throw loginError('token_invalid', 'the token response has no id_token');
    const tokens: LoginTokens = { ...rest, idToken };
    // openid-client checked the ID token's claims; jose now checks its signature against the login JWKS too.
    const { userId, claims } = await verifier.verifyIdToken(tokens.idToken, nonce);
    let isNewUser: boolean | undefined;
    if (options.upsertUser) {
      try {
        isNewUser = (await options.upsertUser(userId, claims)) === true;
      } catch (error) {
        throw new KybLoginError('user_store_failed', undefined, { detail: 'upsertUser threw', cause: error });
      }
    }
    return { userId, isNewUser, tokens, claims };
  };

  const exchange = async (callbackUrl: URL, checks: oidc.AuthorizationCodeGrantChecks): Promise<oidc.TokenEndpointResponse> => {
    try {
      return await oidc.authorizationCodeGrant(config, callbackUrl, { ...checks, idTokenExpected: true });
    } catch (error) {
      throw protocolError(error, confidential, 'authorization_code');
    }
  };

  /**
   * The transaction of the callback's state, used up only once it is known to be this browser's: a forged callback
   * (another state) finds no cookie of that name and leaves the pending login alone.
   */
  const takeTransaction = async (request: LoginRequest, state: string): Promise<LoginTransaction> => {
    const secure = secureFor(request);
    const value = readCookie(request.header('cookie'), transactionCookieName(secure, state));
    if (!value) {
      // Another login of this browser is pending: the callback is not its (another tab's stale state, or forged).
      if (transactionCookies(request, secure).length > 0) throw loginError('state_mismatch', 'no pending login of this browser has the callback state');
      throw loginError('transaction_missing', 'no transaction cookie on the callback');
    }
    const opened = await transactions.open(value);
    if (opened === 'expired') throw loginError('transaction_missing', 'the transaction cookie expired');
    if (opened === 'invalid') throw loginError('transaction_invalid', 'the transaction cookie did not decrypt');
    const sealed = (options.transactionStore ? opened : opened.tx) as Partial<LoginTransaction> | undefined;
    if (typeof sealed?.state !== 'string') throw loginError('transaction_invalid', 'the transaction is incomplete');
    if (sealed.state !== state) throw loginError('state_mismatch', 'the callback state is not this transaction\u2019s');
    const id = String(opened.jti);
    // Single use: remember the id until the cookie would have expired anyway (with a store too, so a replay is told
    // apart from a transaction the store no longer has).
    const now = Date.now();
    for (const [key, expiresAt] of usedTransactions) {
      if (expiresAt > now && usedTransactions.size < MAX_USED_TRANSACTIONS) break;
      usedTransactions.delete(key);
    }
    if (usedTransactions.has(id)) throw loginError('transaction_replayed', 'this transaction cookie was already used');
    usedTransactions.set(id, (Number(opened.exp) || 0) * 1000);
    if (options.transactionStore) {
      const stored = await options.transactionStore.take(id);
      // Not used here, so expired or evicted (memoryTransactionStore drops the oldest when full), or used by
      // another instance: the user can only start again, and was not the one who replayed it.
      if (!stored) throw loginError('transaction_missing', 'the transaction is not in the store (expired, evicted, or used on another instance)');
      return stored;
    }
    const tx = opened.tx as LoginTransaction | undefined;
    if (!tx || typeof tx.codeVerifier !== 'string') throw loginError('transaction_invalid', 'the transaction is incomplete');
    return tx;
  };

  const login: Login = {
    issuer: server.issuer,
    sessions: sessionMaxAge > 0,
    redirectUriFor,

    async start(request, startOptions = {}) {
      const returnTo = startOptions.returnTo === undefined ? '/' : safeReturnPath(startOptions.returnTo);
      if (returnTo === undefined) throw loginError('return_path_invalid', 'returnTo is not a same-origin path');
      const redirectUri = redirectUriFor(request);
      const transaction: LoginTransaction = {
        state: oidc.randomState(),
        codeVerifier: oidc.randomPKCECodeVerifier(),
        nonce: oidc.randomNonce(),
        returnTo,
        redirectUri,
      };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope,
        state: transaction.state,
        nonce: transaction.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(transaction.codeVerifier),
        code_challenge_method: 'S256',
        prompt: 'consent',
        access_type: 'offline',
        audience: options.audience,
      });
      const id = oidc.randomState();
      if (options.transactionStore) await options.transactionStore.set(id, transaction, transactionTtl);
      // With a store the cookie keeps the state too, so a callback's state is compared before the store entry is used.
      const sealed = await transactions.seal(
        options.transactionStore ? { jti: id, state: transaction.state } : { jti: id, tx: { ...transaction } },
        transactionTtl,
      );
      const secure = secureFor(request);
      const name = transactionCookieName(secure, transaction.state);
      // Browsers drop a cookie whose name and value pass 4096 bytes, and the login would fail only at the callback
      // (transaction_missing) after the user went through the login server: refuse it now. Only the return path varies.
      if (name.length + 1 + sealed.length > MAX_COOKIE_BYTES) {
        throw loginError('return_path_invalid', `the transaction cookie would pass ${MAX_COOKIE_BYTES} bytes: returnTo is too long for it`);
      }
      return {
        url,
        setCookie: serializeCookie(name, sealed, { path: transactionCookiePath(request), maxAgeSeconds: transactionTtl, secure }),
      };
    },

    async finish(request) {
      const setCookie = login.clearTransactionCookie(request);
      const query = new URL(request.url, 'http://callback.invalid').searchParams;
      const states = query.getAll('state');
      if (states.length === 0) throw loginError('state_mismatch', 'the callback has no state');
      if (states.length > 1) throw loginError('state_mismatch', 'the callback has several states');
      const transaction = await takeTransaction(request, states[0]!);
      if (query.has('error')) throw loginError('authorization_denied', `the login server answered ${safeWord(query.get('error'))}`);
      // Malformed answers anyone can send are the request's fault (400), checked here rather than left to
      // openid-client, whose refusals of them would read as a token or issuer problem (401, 503).
      const codes = query.getAll('code');
      if (codes.length !== 1 || codes[0] === '') throw loginError('callback_invalid', codes.length > 1 ? 'the callback has several codes' : 'the callback has no code');
      const issuers = query.getAll('iss');
      if (issuers.length > 1) throw loginError('callback_invalid', 'the callback has several iss parameters');
      if (issuers.length === 1 && issuers[0] !== server.issuer) throw loginError('callback_invalid', 'the callback iss (RFC 9207) is not the login server\u2019s issuer');
      if (issuers.length === 0 && server.authorization_response_iss_parameter_supported === true) {
        throw loginError('callback_invalid', 'the callback has no iss, which the login server announces it always sends (RFC 9207)');
      }
      // The token request must repeat the authorization request's redirect_uri exactly, whatever host or proxy the
      // callback came through: build the URL openid-client reads it from out of the stored one.
      const callbackUrl = new URL(transaction.redirectUri);
      callbackUrl.search = query.toString();
      const response = await exchange(callbackUrl, { pkceCodeVerifier: transaction.codeVerifier, expectedState: transaction.state, expectedNonce: transaction.nonce });
      return { ...(await complete(response, transaction.nonce)), returnTo: transaction.returnTo, setCookie };
    },

    clearTransactionCookie(request) {
      const secure = secureFor(request);
      const state = new URL(request.url, 'http://callback.invalid').searchParams.get('state') ?? '';
      return serializeCookie(transactionCookieName(secure, state), '', { path: transactionCookiePath(request), maxAgeSeconds: 0, secure });
    },

    async staleTransactionCookies(request) {
      const secure = secureFor(request);
      const own = transactionCookieName(secure, new URL(request.url, 'http://callback.invalid').searchParams.get('state') ?? '');
      const others = transactionCookies(request, secure).filter(([name]) => name !== own);
      if (others.length <= MAX_OTHER_PENDING_LOGINS) return [];
      // Newest first by the sealed issue time; an unreadable one (another secret, altered) counts as oldest.
      const aged = await Promise.all(
        others.map(async ([name, value]) => {
          const opened = await transactions.open(value);
          return { name, issuedAt: typeof opened === 'object' ? Number(opened.iat) || 0 : -1 };
        }),
      );
      aged.sort((a, b) => b.issuedAt - a.issuedAt);
      const path = transactionCookiePath(request);
      return aged.slice(MAX_OTHER_PENDING_LOGINS).map(({ name }) => serializeCookie(name, '', { path, maxAgeSeconds: 0, secure }));
    },

    async exchangeCode(input) {
      if (typeof input?.code !== 'string' || input.code === '' || typeof input.codeVerifier !== 'string' || input.codeVerifier === '') {
        throw loginError('code_exchange_failed', 'exchangeCode needs a code and a codeVerifier');
      }
      const redirectUri = input.redirectUri ?? (options.redirectUri.startsWith('/') ? undefined : options.redirectUri);
      if (redirectUri === undefined) {
        throw new KybLoginError('config_invalid', 'exchangeCode needs the absolute redirectUri the browser used, because the configured redirectUri is a path.');
      }
      const callbackUrl = new URL(redirectUri);
      // The browser checked the authorization response itself; `iss` (RFC 9207) is the one it got, or the issuer.
      callbackUrl.search = new URLSearchParams({ code: input.code, iss: input.iss ?? server.issuer }).toString();
      const response = await exchange(callbackUrl, { pkceCodeVerifier: input.codeVerifier, ...(input.nonce ? { expectedNonce: input.nonce } : {}) });
      return complete(response, input.nonce);
    },

    async refresh(refreshToken) {
      if (typeof refreshToken !== 'string' || refreshToken === '') throw loginError('token_missing', 'refresh needs a refresh token');
      let response: oidc.TokenEndpointResponse;
      try {
        response = await oidc.refreshTokenGrant(config, refreshToken);
      } catch (error) {
        throw protocolError(error, confidential, 'refresh_token');
      }
      const tokens = tokensOf(response, refreshToken);
      if (tokens.idToken === undefined) return { tokens, userId: undefined, claims: undefined };
      const verified = await verifier.verifyIdToken(tokens.idToken);
      return { tokens, userId: verified.userId, claims: verified.claims };
    },

    verifyIdToken: (idToken, verifyOptions) => verifier.verifyIdToken(idToken, verifyOptions?.nonce),
    verifyAccessToken: (accessToken) => verifier.verifyAccessToken(accessToken),

    async sessionCookie(request, userId) {
      const secure = secureFor(request);
      const sealed = await sessions.seal({ sub: userId }, sessionMaxAge);
      return serializeCookie(sessionCookieName(secure), sealed, { path: '/', maxAgeSeconds: sessionMaxAge, secure });
    },

    clearSessionCookie(request) {
      const secure = secureFor(request);
      return serializeCookie(sessionCookieName(secure), '', { path: '/', maxAgeSeconds: 0, secure });
    },

    async sessionUser(request) {
      if (sessionMaxAge <= 0) return undefined;
      const value = readCookie(request.header('cookie'), sessionCookieName(secureFor(request)));
      if (!value) return undefined;
      const opened = await sessions.open(value);
      return typeof opened === 'object' && typeof opened.sub === 'string' ? opened.sub : undefined;
    },
  };
  return login;
}

/** The origin of a request; proxy headers are believed only with trustProxy (first value of each). */
function requestOrigin(request: LoginRequest, trustProxy: boolean): string {
  const first = (name: string): string | undefined => request.header(name)?.split(',')[0]?.trim() || undefined;
  const proto = (trustProxy && first('x-forwarded-proto')) || (request.encrypted ? 'https' : 'http');
  const host = (trustProxy && first('x-forwarded-host')) || request.header('host');
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host) || (proto !== 'http' && proto !== 'https')) {
    throw new KybLoginError('config_invalid', 'The request has no usable Host; configure redirectUri as an absolute URL.');
  }
  return `${proto}://${host}`;
}

/** What {@link stateTag} answers: 13 base-36 digits. */
const STATE_TAG = /^[0-9a-z]{13}$/;

/**
 * A short tag of a login's state for its transaction cookie's name. It only has to tell a browser's parallel logins
 * apart and be computed synchronously from the callback's state (to name the cookie to clear), so a 64-bit
 * non-cryptographic hash (cyrb53's mixing, twice) does; it decides nothing: the sealed state is compared in full.
 * Hashing keeps the state itself out of cookie names.
 */
function stateTag(state: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < state.length; i++) {
    const c = state.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return ((h2 >>> 0).toString(36).padStart(7, '0') + (h1 >>> 0).toString(36).padStart(7, '0')).slice(1);
}

/** openid-client passes its own Request init; keep its redirect: 'manual' and add nothing. */
function fetchFor(custom: typeof fetch): oidc.CustomFetch {
  return (url, init) => custom(url, init as RequestInit);
}

/** An OAuth error code from the server, reduced to a safe word for the detail. */
function safeWord(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? value : 'an error';
}

function discoveryError(error: unknown): KybLoginError {
  const code = (error as { code?: string })?.code;
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    return new KybLoginError(
      'issuer_mismatch',
      'The discovery document at authUrl names a different issuer. Set authUrl to exactly the issuer the login server ' +
        'announces (compare a trailing slash too); tokens are only accepted from that issuer.',
      { detail: 'discovery issuer differs from authUrl' },
    );
  }
  if (code === 'OAUTH_HTTP_REQUEST_FORBIDDEN') {
    return new KybLoginError('config_invalid', 'authUrl must be https (allowInsecureRequests: true only for a local test provider).');
  }
  return new KybLoginError('discovery_failed', `The discovery document at authUrl could not be fetched or read (${safeWord(code ?? (error as Error)?.name)}); check authUrl and the network.`, {
    detail: safeWord(code),
  });
}

/**
 * openid-client's failures → stable codes. The error itself is not kept as `cause`: its cause chain can hold the
 * token response body.
 */
function protocolError(error: unknown, confidential: boolean, grant: 'authorization_code' | 'refresh_token'): KybLoginError {
  if (error instanceof KybLoginError) return error;
  if (grantNotAllowed(error)) return grantRefused(grant);
  const refused = refusedClient(error);
  if (refused) return clientAuthFailed(refused, confidential);
  if (error instanceof oidc.ResponseBodyError) return loginError('code_exchange_failed', `the token endpoint answered ${safeWord(error.error)} (${error.status})`);
  if (error instanceof oidc.AuthorizationResponseError) return loginError('authorization_denied', `the login server answered ${safeWord(error.error)}`);
  const code = (error as { code?: string })?.code;
  const message = (error as Error)?.message ?? '';
  const cause = (error as { cause?: { message?: string; code?: string } })?.cause;
  const inner = cause?.message ?? '';
  if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED') return loginError(/exp/.test(inner) ? 'token_expired' : 'token_invalid', `id_token: ${inner.slice(0, 120)}`);
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' || code === 'OAUTH_INVALID_RESPONSE' || code === 'OAUTH_PARSE_ERROR' || code === 'OAUTH_UNSUPPORTED_OPERATION') {
    if (/"iss"/.test(inner)) return loginError('issuer_mismatch', `response: ${inner.slice(0, 120)}`);
    if (/"state"/.test(inner)) return loginError('state_mismatch', `response: ${inner.slice(0, 120)}`);
    return loginError('token_invalid', `response: ${(inner || message).slice(0, 120)}`);
  }
  if (code === 'OAUTH_TIMEOUT' || error instanceof TypeError || code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON') {
    return loginError('login_server_unavailable', `token endpoint: ${safeWord(code ?? (error as Error)?.name)}`);
  }
  return loginError('code_exchange_failed', `token endpoint: ${safeWord(code)}`);
}

/**
 * How the token endpoint refused the client itself (not the grant), as a safe `error (status)` for the detail, or
 * undefined. RFC 6749 5.2: `invalid_client`, with 401 and a WWW-Authenticate challenge when the client sent HTTP
 * Basic, and possibly 400 otherwise; any 401 there means the same, whatever its body.
 */
function refusedClient(error: unknown): string | undefined {
  if (error instanceof oidc.ResponseBodyError) {
    return error.status === 401 || error.error === 'invalid_client' ? `${safeWord(error.error)} (${error.status})` : undefined;
  }
  if (error instanceof oidc.WWWAuthenticateChallengeError) {
    const named = error.cause.find((challenge) => challenge.parameters.error !== undefined)?.parameters.error;
    return error.status === 401 || named === 'invalid_client' ? `${safeWord(named)} (${error.status})` : undefined;
  }
  // A 401 without an OAuth error body: openid-client's "unexpected status" and "not JSON" keep the response as cause.
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause instanceof Response && cause.status === 401 ? 'no OAuth error (401)' : undefined;
}

/**
 * RFC 6749 5.2 `unauthorized_client`: the client may not use this grant type. A registration problem, like a wrong
 * secret: "start again" would only loop, so it is client_auth_failed too.
 */
function grantNotAllowed(error: unknown): boolean {
  if (error instanceof oidc.ResponseBodyError) return error.error === 'unauthorized_client';
  if (error instanceof oidc.WWWAuthenticateChallengeError) return error.cause.some((challenge) => challenge.parameters.error === 'unauthorized_client');
  return false;
}

function grantRefused(grant: 'authorization_code' | 'refresh_token'): KybLoginError {
  return loginError(
    'client_auth_failed',
    `the login server does not allow this app's client the ${grant} grant at the token endpoint: unauthorized_client. Register ` +
      'the grant types authorization_code and refresh_token for the client (KYB_CLIENT_ID: the clientId option) at the login server',
  );
}

function clientAuthFailed(refused: string, confidential: boolean): KybLoginError {
  // The detail names the settings to check, never their values.
  const detail = confidential
    ? `the login server refused this app's client credentials at the token endpoint: ${refused}. Check the client id and secret ` +
      '(KYB_CLIENT_ID / KYB_CLIENT_SECRET: the clientId and clientSecret options) against the client registered at the login server'
    : `the login server refused this app as a public client at the token endpoint: ${refused}. No clientSecret is set, so the ` +
      'login server must allow this client id without a secret (token endpoint auth method none); otherwise set clientSecret ' +
      '(KYB_CLIENT_SECRET), and check clientId (KYB_CLIENT_ID)';
  return loginError('client_auth_failed', detail);
}
