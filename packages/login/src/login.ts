import * as oidc from 'openid-client';
import { readCookie, serializeCookie } from './cookies.js';
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
   * Completes a login on the callback request: the transaction cookie read and used up, the state checked, the code
   * exchanged (HTTP Basic for a confidential client), the ID token verified. Resolves with the result and the path
   * to return to; the cookie to clear the transaction is in `setCookie`, success or not (see {@link KybLoginError}).
   */
  finish(request: LoginRequest): Promise<LoginResult & { returnTo: string; setCookie: string }>;
  /** The Set-Cookie value that clears the transaction cookie (after a failed callback). */
  clearTransactionCookie(request: LoginRequest): string;
  /**
   * The backend exchange the spec recommends for browser apps: the browser did the redirect with its own PKCE
   * verifier and hands the code and verifier to the backend, which exchanges them with the client secret.
   */
  exchangeCode(input: { code: string; codeVerifier: string; nonce?: string; redirectUri?: string; iss?: string }): Promise<LoginResult>;
  /** Uses a refresh token; resolves with the new tokens (the refresh token is the new one, or the same if not rotated). */
  refresh(refreshToken: string): Promise<{ tokens: LoginTokens; userId: string | undefined; claims: VerifiedClaims | undefined }>;
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

/** Used transaction ids in cookie mode are remembered until the transaction's expiry; bounded. */
const MAX_USED_TRANSACTIONS = 100_000;

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
  const transactionCookieName = (secure: boolean): string =>
    options.cookies?.transactionName ?? (secure ? '__Secure-kyb-login-tx' : 'kyb-login-tx');
  const sessionCookieName = (secure: boolean): string =>
    options.cookies?.sessionName ?? (secure ? '__Host-kyb-login-session' : 'kyb-login-session');
  // The transaction cookie goes only to the callback path, so it is sent nowhere else.
  const transactionCookiePath = (request: LoginRequest): string => new URL(redirectUriFor(request)).pathname;

  const tokensOf = (response: oidc.TokenEndpointResponse, previousRefreshToken?: string): LoginTokens => {
    if ((response.token_type ?? '').toLowerCase() !== 'bearer') throw loginError('token_invalid', 'token_type is not bearer');
    if (typeof response.id_token !== 'string') throw loginError('token_invalid', 'the token response has no id_token');
    const refreshToken = response.refresh_token ?? previousRefreshToken;
    return {
      accessToken: response.access_token,
      idToken: response.id_token,
      ...(refreshToken ? { refreshToken } : {}),
      expiresIn: typeof response.expires_in === 'number' ? response.expires_in : 0,
      tokenType: 'bearer',
      ...(typeof response.scope === 'string' ? { scope: response.scope } : {}),
    };
  };

  const complete = async (response: oidc.TokenEndpointResponse, nonce: string | undefined): Promise<LoginResult> => {
    const tokens = tokensOf(response);
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
      throw protocolError(error, confidential);
    }
  };

  const takeTransaction = async (request: LoginRequest): Promise<LoginTransaction> => {
    const value = readCookie(request.header('cookie'), transactionCookieName(secureFor(request)));
    if (!value) throw loginError('transaction_missing', 'no transaction cookie on the callback');
    const opened = await transactions.open(value);
    if (opened === 'expired') throw loginError('transaction_missing', 'the transaction cookie expired');
    if (opened === 'invalid') throw loginError('transaction_invalid', 'the transaction cookie did not decrypt');
    const id = String(opened.jti);
    if (options.transactionStore) {
      const stored = await options.transactionStore.take(id);
      if (!stored) throw loginError('transaction_replayed', 'the transaction is not in the store (used or expired)');
      return stored;
    }
    // Single use in cookie mode: remember the id until the cookie would have expired anyway.
    const now = Date.now();
    for (const [key, expiresAt] of usedTransactions) {
      if (expiresAt > now && usedTransactions.size < MAX_USED_TRANSACTIONS) break;
      usedTransactions.delete(key);
    }
    if (usedTransactions.has(id)) throw loginError('transaction_replayed', 'this transaction cookie was already used');
    usedTransactions.set(id, (Number(opened.exp) || 0) * 1000);
    const tx = opened.tx as LoginTransaction | undefined;
    if (!tx || typeof tx.state !== 'string' || typeof tx.codeVerifier !== 'string') throw loginError('transaction_invalid', 'the transaction is incomplete');
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
      const sealed = await transactions.seal(options.transactionStore ? { jti: id } : { jti: id, tx: { ...transaction } }, transactionTtl);
      const secure = secureFor(request);
      return {
        url,
        setCookie: serializeCookie(transactionCookieName(secure), sealed, { path: transactionCookiePath(request), maxAgeSeconds: transactionTtl, secure }),
      };
    },

    async finish(request) {
      const setCookie = login.clearTransactionCookie(request);
      const query = new URL(request.url, 'http://callback.invalid').searchParams;
      const transaction = await takeTransaction(request);
      const state = query.get('state');
      if (state === null) throw loginError('state_mismatch', 'the callback has no state');
      if (state !== transaction.state) throw loginError('state_mismatch', 'the callback state is not this transaction\u2019s');
      if (query.has('error')) throw loginError('authorization_denied', `the login server answered ${safeWord(query.get('error'))}`);
      // The token request must repeat the authorization request's redirect_uri exactly, whatever host or proxy the
      // callback came through: build the URL openid-client reads it from out of the stored one.
      const callbackUrl = new URL(transaction.redirectUri);
      callbackUrl.search = query.toString();
      const response = await exchange(callbackUrl, { pkceCodeVerifier: transaction.codeVerifier, expectedState: transaction.state, expectedNonce: transaction.nonce });
      return { ...(await complete(response, transaction.nonce)), returnTo: transaction.returnTo, setCookie };
    },

    clearTransactionCookie(request) {
      const secure = secureFor(request);
      return serializeCookie(transactionCookieName(secure), '', { path: transactionCookiePath(request), maxAgeSeconds: 0, secure });
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
        throw protocolError(error, confidential);
      }
      const tokens = tokensOf(response, refreshToken);
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
function protocolError(error: unknown, confidential: boolean): KybLoginError {
  if (error instanceof KybLoginError) return error;
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
