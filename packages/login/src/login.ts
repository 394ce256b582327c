import { base64url } from 'jose';
import * as oidc from 'openid-client';
import { readCookie, readCookies, serializeCookie } from './cookies.js';
import { KybLoginError, loginError } from './errors.js';
import { validateLoginOptions, type LoginOptions } from './options.js';
import { safeReturnPath } from './return-path.js';
import { Sealer } from './sealed.js';
import { foreignIssuer, TokenVerifier, userIdFromSubject, type VerifiedClaims, type VerifiedUser } from './tokens.js';
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
 * The start of a login: where to send the browser, and the cookies to set: the one that remembers the transaction,
 * the one that binds it to this browser, and any that clear logins this browser abandoned.
 *
 * @example
 * ```ts
 * const { url, setCookie } = await login.start(request, { returnTo: '/account' })
 * res.setHeader('set-cookie', setCookie).redirect(url.href)
 * ```
 */
export interface LoginStart {
  url: URL;
  /**
   * Set-Cookie values, each its own header line: the transaction cookie first, then the browser binding cookie
   * (`__Host-kyb-login-bind`; without it the callback answers `state_mismatch`), then clearing ones.
   */
  setCookie: string[];
}

/**
 * The session a refresh continues: the claims of its sign-in's ID token (`LoginResult.claims`, or the `claims` of the
 * last refresh that had an ID token), or only its user id (what the login routes' session cookie holds, which checks
 * `sub` and `iss` but cannot check `aud`). {@link Login.refresh} refuses a refreshed ID token that differs from it.
 *
 * @example
 * ```ts
 * const { tokens, claims } = await login.refresh(stored.refreshToken, { claims: stored.claims })
 * const again = await login.refresh(tokens.refreshToken!, { userId: await login.sessionUser(request) ?? '' })
 * ```
 */
export type RefreshSession = { claims: Pick<VerifiedClaims, 'iss' | 'sub' | 'aud'> } | { userId: string };

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
  /** The path of the redirect URI, where the callback route is mounted (e.g. `/auth/callback`). */
  readonly callbackPath: string;
  /**
   * Starts a login: the authorization URL with every parameter of spec 4.1, the transaction cookie, and the cookie
   * that binds the transaction to this browser (reused when the request has one). It also clears the cookies of the
   * oldest logins this browser left pending, so that all of them together stay small enough for any server to read.
   */
  start(request: LoginRequest, options?: { returnTo?: string }): Promise<LoginStart>;
  /**
   * Completes a login on the callback request: the transaction cookie of the callback's state read, its state
   * compared, its binding to this browser checked (a transaction cookie planted from another browser, e.g. by a
   * sibling subdomain, is `state_mismatch`), and only then used up; the callback's `code` and `iss` checked, the code
   * exchanged (HTTP Basic for a confidential client), the ID token verified. Resolves with the result and the path
   * to return to; the cookie to clear the transaction is in `setCookie` (on failure,
   * {@link Login.clearTransactionCookie}; see {@link KybLoginError}).
   */
  finish(request: LoginRequest): Promise<LoginResult & { returnTo: string; setCookie: string }>;
  /**
   * The Set-Cookie value that clears the transaction cookie of the callback's `state` (after a failed callback). Each
   * login has its own cookie, named after its state, so logins started in several tabs do not undo each other.
   */
  clearTransactionCookie(request: LoginRequest): string;
  /**
   * Set-Cookie values for the callback request: the binding cookie without the callback's own login (ended, success or
   * not), and cookies that clear the transaction cookies of logins this browser abandoned, all but the newest few
   * beside the callback's own, so abandoned logins cannot pile up cookies until they expire.
   */
  callbackCleanupCookies(request: LoginRequest): Promise<string[]>;
  /**
   * The backend exchange the spec recommends for browser apps: the browser did the redirect with its own PKCE
   * verifier and hands the code and verifier to the backend, which exchanges them with the client secret.
   */
  exchangeCode(input: { code: string; codeVerifier: string; nonce?: string; redirectUri?: string; iss?: string }): Promise<LoginResult>;
  /**
   * Uses a refresh token; resolves with the new tokens (the refresh token is the new one, or the same if not rotated).
   * `session` is the session it continues ({@link RefreshSession}): a refreshed ID token must keep its `iss`, `sub`
   * and `aud` (OIDC Core 12.2), or the refresh is refused with `token_invalid` (a refresh token that signs in another
   * user must never extend this one's session). A refresh answer may come without an ID token (OIDC Core 12.2): then
   * `tokens.idToken`, `userId` and `claims` are undefined; with one, it is verified like at sign-in and they are its.
   */
  refresh(refreshToken: string, session: RefreshSession): Promise<{
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
 * What the start route lets a browser's pending transaction cookies add up to, in count and bytes. They all travel
 * in one Cookie header to the callback, and a server refuses a header past its limit (nginx: 8 KB a line, Node:
 * 16 KB in all) before the app sees it, which would lock the user out until they expire. 6 KB leaves room in 8 KB
 * for the session, the binding cookie and the app's own; it holds about three logins with the longest return path,
 * or five with short ones, so a few tabs signing in at once all finish.
 */
const MAX_PENDING_LOGINS = 1 + MAX_OTHER_PENDING_LOGINS;
const MAX_PENDING_TRANSACTION_BYTES = 6144;

/**
 * The binding cookie's life, as Django's CSRF cookie: long, so that a browser has one before it starts logins in
 * several tabs at once (tabs that each made a fresh one would overwrite each other's, and all but one would fail).
 */
const BINDING_COOKIE_SECONDS = 365 * 24 * 3600;

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
  if (!namesConfiguredIssuer(server.issuer, options.authUrl)) throw issuerMismatch();
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
  // The transaction cookie is on the callback path, so it cannot be a __Host- cookie, and a sibling subdomain may
  // plant one of its own (Domain=<parent>): the binding cookie, __Host- (Secure, Path=/, no Domain: only this host
  // can set it), ties each transaction to the browser that started it. On plain-http loopback development a
  // __Host- cookie cannot be set (it needs Secure), and there is no sibling subdomain to fear.
  const bindingCookieName = (secure: boolean): string => (secure ? '__Host-kyb-login-bind' : 'kyb-login-bind');
  const bindingOf = (request: LoginRequest, secure: boolean): Binding | undefined => readBinding(readCookie(request.header('cookie'), bindingCookieName(secure)));
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
    // Checked before the transaction is used up: a planted cookie must not spend anything of this browser's.
    const binding = bindingOf(request, secure);
    if (typeof opened.bind !== 'string' || binding === undefined || opened.bind !== (await bindingHash(binding.id))) {
      throw loginError(
        'state_mismatch',
        `the transaction cookie was not started in this browser: the ${bindingCookieName(secure)} cookie is ${binding === undefined ? 'missing' : 'another'} (a transaction cookie planted from elsewhere, e.g. by a sibling subdomain, or this browser's cookies were cleared)`,
      );
    }
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
    callbackPath: new URL(options.redirectUri, 'http://callback.invalid').pathname,

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
      const secure = secureFor(request);
      const previous = bindingOf(request, secure);
      const binding: Binding = { id: previous?.id ?? oidc.randomState(), pending: previous?.pending ?? [] };
      const id = oidc.randomState();
      if (options.transactionStore) await options.transactionStore.set(id, transaction, transactionTtl);
      // With a store the cookie keeps the state too, so a callback's state is compared before the store entry is used.
      // The binding's hash, not the binding: the transaction cookie reaches a path a sibling could plant cookies on.
      const bind = await bindingHash(binding.id);
      const sealed = await transactions.seal(
        options.transactionStore ? { jti: id, state: transaction.state, bind } : { jti: id, tx: { ...transaction }, bind },
        transactionTtl,
      );
      const name = transactionCookieName(secure, transaction.state);
      // Browsers drop a cookie whose name and value pass 4096 bytes, and the login would fail only at the callback
      // (transaction_missing) after the user went through the login server: refuse it now. Only the return path varies.
      if (name.length + 1 + sealed.length > MAX_COOKIE_BYTES) {
        throw loginError('return_path_invalid', `the transaction cookie would pass ${MAX_COOKIE_BYTES} bytes: returnTo is too long for it`);
      }
      const path = transactionCookiePath(request);
      // The transaction cookies only reach the callback path, so this route cannot see them: the binding cookie lists
      // the pending ones (tag, size, start time), and the oldest beyond the count and bytes a Cookie header can carry
      // are cleared here, before they could make the callback's request too large for the server to read.
      const now = Math.floor(Date.now() / 1000);
      const newestFirst = [{ tag: stateTag(transaction.state), bytes: name.length + 1 + sealed.length, issuedAt: now }];
      const stale: PendingLogin[] = [];
      let bytes = newestFirst[0]!.bytes;
      for (const pending of [...binding.pending].reverse()) {
        if (pending.issuedAt + transactionTtl <= now) continue; // the browser dropped it already
        if (stale.length === 0 && newestFirst.length < MAX_PENDING_LOGINS && bytes + pending.bytes <= MAX_PENDING_TRANSACTION_BYTES) {
          newestFirst.push(pending);
          bytes += pending.bytes;
        } else stale.push(pending);
      }
      binding.pending = newestFirst.reverse();
      return {
        url,
        setCookie: [
          serializeCookie(name, sealed, { path, maxAgeSeconds: transactionTtl, secure }),
          serializeCookie(bindingCookieName(secure), writeBinding(binding), { path: '/', maxAgeSeconds: BINDING_COOKIE_SECONDS, secure }),
          ...stale.map((pending) => serializeCookie(transactionCookiePrefix(secure) + pending.tag, '', { path, maxAgeSeconds: 0, secure })),
        ],
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

    async callbackCleanupCookies(request) {
      const secure = secureFor(request);
      const ownState = new URL(request.url, 'http://callback.invalid').searchParams.get('state') ?? '';
      const own = transactionCookieName(secure, ownState);
      // The callback ends its own login (its cookie is cleared, success or not): the binding cookie stops listing it,
      // or the start route would count it as pending and clear a real login in progress to make room.
      const binding = bindingOf(request, secure);
      const ownTag = stateTag(ownState);
      const finished: string[] = [];
      if (binding && binding.pending.some((pending) => pending.tag === ownTag)) {
        binding.pending = binding.pending.filter((pending) => pending.tag !== ownTag);
        finished.push(serializeCookie(bindingCookieName(secure), writeBinding(binding), { path: '/', maxAgeSeconds: BINDING_COOKIE_SECONDS, secure }));
      }
      const all = transactionCookies(request, secure);
      const others = all.filter(([name]) => name !== own);
      // As many as the start route lets pend: a callback without a cookie of its own (forged, or a login the start
      // route already cleared) must not cost the browser one of its logins in progress.
      const keep = others.length < all.length ? MAX_OTHER_PENDING_LOGINS : MAX_PENDING_LOGINS;
      if (others.length <= keep) return finished;
      // Newest first by the sealed issue time (whole seconds; within one, the later in the header is the newer, as
      // browsers send cookies of one path oldest first); an unreadable one (another secret, altered) counts as oldest.
      const aged = await Promise.all(
        others.map(async ([name, value], index) => {
          const opened = await transactions.open(value);
          return { name, index, issuedAt: typeof opened === 'object' ? Number(opened.iat) || 0 : -1 };
        }),
      );
      aged.sort((a, b) => b.issuedAt - a.issuedAt || b.index - a.index);
      const path = transactionCookiePath(request);
      return [...finished, ...aged.slice(keep).map(({ name }) => serializeCookie(name, '', { path, maxAgeSeconds: 0, secure }))];
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

    async refresh(refreshToken, session) {
      if (typeof refreshToken !== 'string' || refreshToken === '') throw loginError('token_missing', 'refresh needs a refresh token');
      // Before the token endpoint: a call that cannot be checked must not spend the refresh token.
      checkRefreshSession(session);
      let response: oidc.TokenEndpointResponse;
      try {
        response = await oidc.refreshTokenGrant(config, refreshToken);
      } catch (error) {
        throw protocolError(error, confidential, 'refresh_token');
      }
      const tokens = tokensOf(response, refreshToken);
      if (tokens.idToken === undefined) return { tokens, userId: undefined, claims: undefined };
      const verified = await verifier.verifyIdToken(tokens.idToken);
      const changed = changedSessionClaim(verified.claims, session, server.issuer);
      if (changed) throw loginError('token_invalid', `the refreshed id_token's ${changed} is not the session's (OIDC Core 12.2)`);
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

/**
 * The origin of a request; proxy headers are believed only with trustProxy (first value of each). A Host that is no
 * host name (`shop_example.com`, a bad port, none at all) is what the client or a proxy sent, not a misconfiguration:
 * 400 host_invalid, whose detail names the header and the way around it.
 */
function requestOrigin(request: LoginRequest, trustProxy: boolean): string {
  const first = (name: string): string | undefined => request.header(name)?.split(',')[0]?.trim() || undefined;
  const forwardedProto = trustProxy ? first('x-forwarded-proto')?.toLowerCase() : undefined;
  const proto = forwardedProto ?? (request.encrypted ? 'https' : 'http');
  const forwardedHost = trustProxy ? first('x-forwarded-host') : undefined;
  const header = forwardedHost === undefined ? 'Host' : 'X-Forwarded-Host';
  const host = forwardedHost ?? request.header('host')?.trim();
  const fix = 'the path redirectUri is resolved against it (an absolute redirectUri does not read it)';
  if (proto !== 'http' && proto !== 'https') throw loginError('host_invalid', `X-Forwarded-Proto is neither http nor https; ${fix}`);
  if (!host) throw loginError('host_invalid', `the request has no Host header; ${fix}`);
  // Letters, digits, dots, hyphens, an IPv6 literal and a port only: no userinfo, path or underscore can ride along.
  if (/^[A-Za-z0-9.\-:[\]]+$/.test(host) && URL.canParse(`${proto}://${host}/`)) return new URL(`${proto}://${host}/`).origin;
  throw loginError('host_invalid', `the ${header} header is not a host name; ${fix}`);
}

/** A browser's binding: its random id, and the logins it has pending (oldest first), as the binding cookie lists them. */
interface Binding {
  id: string;
  pending: PendingLogin[];
}

/** A pending login of the binding cookie: its cookie's tag, its cookie's size, and when it started (Unix seconds). */
interface PendingLogin {
  tag: string;
  bytes: number;
  issuedAt: number;
}

const BINDING_ID = /^[A-Za-z0-9_-]{43}$/;
const PENDING_ENTRY = /^([0-9a-z]{13}):([0-9a-z]{1,4}):([0-9a-z]{1,8})$/;

/**
 * The binding cookie's value, `<id>.<tag>:<bytes>:<issued>…` (base 36): an id that is not 32 random bytes in
 * base64url voids it all (a fresh one is made), and entries that do not parse are left out. It is not sealed: only
 * this host can set it (__Host-), and a user who edits their own can at most have their own pending logins cleared.
 */
function readBinding(value: string | undefined): Binding | undefined {
  const [id, ...entries] = (value ?? '').split('.');
  if (id === undefined || !BINDING_ID.test(id)) return undefined;
  const pending: PendingLogin[] = [];
  for (const entry of entries.slice(-MAX_PENDING_LOGINS)) {
    const match = PENDING_ENTRY.exec(entry);
    if (match) pending.push({ tag: match[1]!, bytes: parseInt(match[2]!, 36), issuedAt: parseInt(match[3]!, 36) });
  }
  return { id, pending };
}

function writeBinding(binding: Binding): string {
  return [binding.id, ...binding.pending.map((p) => `${p.tag}:${p.bytes.toString(36)}:${p.issuedAt.toString(36)}`)].join('.');
}

/** What a transaction keeps of its browser's binding: a hash, so the id itself is only ever in its __Host- cookie. */
async function bindingHash(id: string): Promise<string> {
  return base64url.encode(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`kyb-login binding\0${id}`))));
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

/** Throws `config_invalid`, with the call to write, unless `session` is a {@link RefreshSession}. */
function checkRefreshSession(session: unknown): void {
  const s = session as { claims?: Record<string, unknown>; userId?: unknown } | undefined;
  const claims = s?.claims;
  const aud = claims?.aud;
  const validClaims = typeof claims?.iss === 'string' && typeof claims.sub === 'string' && (typeof aud === 'string' || Array.isArray(aud));
  if (validClaims || (claims === undefined && typeof s?.userId === 'string' && s.userId !== '')) return;
  throw new KybLoginError(
    'config_invalid',
    'login.refresh needs the session it continues, to check the refreshed ID token against it (OIDC Core 12.2): ' +
      'login.refresh(refreshToken, { claims }) with the ID token claims of the sign-in (LoginResult.claims) or of the last ' +
      'refresh, or login.refresh(refreshToken, { userId }) with the signed-in user id.',
  );
}

/**
 * The claim of a refreshed ID token that is not the session's, or undefined (OIDC Core 12.2: `iss`, `sub` and `aud`
 * stay those of the sign-in). Audiences are compared as sets: `"a"` and `["a"]` name the same audience.
 */
function changedSessionClaim(claims: VerifiedClaims, session: RefreshSession, issuer: string): 'iss' | 'sub' | 'aud' | undefined {
  if (!('claims' in session)) {
    if (claims.iss !== issuer) return 'iss';
    return userIdFromSubject(claims.sub) === session.userId ? undefined : 'sub';
  }
  const original = session.claims;
  if (claims.iss !== original.iss) return 'iss';
  if (claims.sub !== original.sub) return 'sub';
  const audiences = (aud: string | string[] | undefined): string => JSON.stringify([...new Set([aud ?? []].flat())].sort());
  return audiences(claims.aud) === audiences(original.aud) ? undefined : 'aud';
}

/** openid-client passes its own Request init; keep its redirect: 'manual' and add nothing. */
function fetchFor(custom: typeof fetch): oidc.CustomFetch {
  return (url, init) => custom(url, init as RequestInit);
}

/** An OAuth error code from the server, reduced to a safe word for the detail. */
function safeWord(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? value : 'an error';
}

function issuerMismatch(): KybLoginError {
  return new KybLoginError(
    'issuer_mismatch',
    'The discovery document at authUrl names a different issuer. Set authUrl to exactly the issuer the login server ' +
      'announces (a trailing slash counts, except after a bare origin: https://login.example and https://login.example/ ' +
      'are one issuer); tokens are only accepted from that issuer.',
    { detail: 'discovery issuer differs from authUrl' },
  );
}

/** An issuer that is a bare origin, with or without the slash a URL parser adds: `https://login.example[/]`. */
const ROOT_ISSUER = /^https?:\/\/[^/?#\s]+\/?$/i;

/**
 * Whether the discovery document names the configured issuer (OIDC Discovery 4.3: identical), with one allowance: at
 * a bare origin a trailing slash is no difference, since `https://login.example` and `https://login.example/` are one
 * URL and both spellings are in use. openid-client compares the two as parsed URLs, which also equates other spellings
 * (a scheme in capitals, `127.1`); those stay refused here, because every `iss` is then compared with the document's
 * issuer as a string.
 */
function namesConfiguredIssuer(discovered: string, authUrl: string): boolean {
  if (discovered === authUrl) return true;
  return ROOT_ISSUER.test(discovered) && ROOT_ISSUER.test(authUrl) && discovered.replace(/\/$/, '') === authUrl.replace(/\/$/, '');
}

function discoveryError(error: unknown): KybLoginError {
  const code = (error as { code?: string })?.code;
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return issuerMismatch();
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
    // The ID token's iss (finish checks the callback's RFC 9207 iss itself, before the exchange): the token's fault.
    if (/"iss"/.test(inner)) return /response parameter/.test(inner) ? loginError('callback_invalid', `response: ${inner.slice(0, 120)}`) : foreignIssuer('id_token', `id_token: ${inner.slice(0, 120)}`);
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
