/**
 * The login: the {@link Login} interface the framework mounts and applications use, and {@link createLogin}, which
 * checks the options, runs discovery, and builds it over one {@link LoginContext}. What each method does lives in a
 * module of its own:
 * - discovery.ts: discovery and the issuer check, at start-up;
 * - sign-in.ts: start, the callback (finish), the backend code exchange;
 * - transaction-cookie.ts and binding.ts: a login's transaction in the browser, and its binding to that browser;
 * - session.ts: the session cookie, signing out, and refresh;
 * - token-endpoint.ts: the token endpoint and its refusals; tokens.ts: ID and access token verification;
 * - redirect-uri.ts: the redirect URI and cookie security of a request.
 */
import type { LoginContext } from './context.js';
import { discover } from './discovery.js';
import { loginError } from './errors.js';
import { validateLoginOptions, type LoginOptions } from './options.js';
import { redirectUriFor } from './redirect-uri.js';
import { Sealer } from './sealed.js';
import { clearSessionCookie, refresh, sessionCookie, sessionUser } from './session.js';
import { exchangeCode, finishLogin, startLogin } from './sign-in.js';
import { TokenVerifier, type VerifiedClaims, type VerifiedUser } from './tokens.js';
import { callbackCleanupCookies, clearTransactionCookie } from './transaction-cookie.js';
import type { LoginRequest, LoginResult, LoginStart, LoginTokens, RefreshSession } from './types.js';

export type { LoginRequest, LoginResult, LoginStart, LoginTokens, RefreshSession } from './types.js';

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
  exchangeCode(input: {
    code: string;
    codeVerifier: string;
    nonce?: string;
    redirectUri?: string;
    iss?: string;
  }): Promise<LoginResult>;
  /**
   * Uses a refresh token; resolves with the new tokens (the refresh token is the new one, or the same if not rotated).
   * `session` is the session it continues ({@link RefreshSession}): a refreshed ID token must keep its `iss`, `sub`
   * and `aud` (OIDC Core 12.2), or the refresh is refused with `token_invalid` (a refresh token that signs in another
   * user must never extend this one's session). A refresh answer may come without an ID token (OIDC Core 12.2): then
   * `tokens.idToken`, `userId` and `claims` are undefined; with one, it is verified like at sign-in and they are its.
   */
  refresh(
    refreshToken: string,
    session: RefreshSession,
  ): Promise<{
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
  const { config, server, jwksUri } = await discover(options, {
    idTokenAlgorithm: algorithm,
    clockToleranceSeconds: tolerance,
    timeoutSeconds: options.timeoutSeconds ?? DEFAULTS.timeoutSeconds,
  });
  const verifier = new TokenVerifier({
    issuer: server.issuer,
    jwksUri,
    clientId: options.clientId,
    audience: options.audience,
    algorithm,
    clockToleranceSeconds: tolerance,
    jwksCooldownMs: options.jwksCooldownMs ?? DEFAULTS.jwksCooldownMs,
    jwksTimeoutMs: (options.timeoutSeconds ?? DEFAULTS.timeoutSeconds) * 1000,
    fetch: options.fetch,
  });
  // Spec 4.1: fetch the JWKS at start-up and cache it.
  try {
    await verifier.jwks.reload();
  } catch {
    throw loginError('jwks_unavailable', 'the login JWKS could not be fetched at start-up');
  }
  const ctx: LoginContext = {
    options,
    config,
    server,
    verifier,
    confidential: options.clientSecret !== undefined,
    transactionTtl: options.transactionTtlSeconds ?? DEFAULTS.transactionTtlSeconds,
    sessionMaxAge: options.session === false ? 0 : (options.session?.maxAgeSeconds ?? DEFAULTS.sessionMaxAgeSeconds),
    transactions: new Sealer(options.secret, 'kyb-login transaction v1'),
    sessions: new Sealer(options.secret, 'kyb-login session v1'),
    usedTransactions: new Map<string, number>(),
    scope: ['openid', 'offline', 'offline_access', ...(options.business ? ['business'] : [])].join(' '),
  };
  return {
    issuer: server.issuer,
    sessions: ctx.sessionMaxAge > 0,
    redirectUriFor: (request) => redirectUriFor(ctx, request),
    callbackPath: new URL(options.redirectUri, 'http://callback.invalid').pathname,
    start: (request, startOptions) => startLogin(ctx, request, startOptions),
    finish: (request) => finishLogin(ctx, request),
    clearTransactionCookie: (request) => clearTransactionCookie(ctx, request),
    callbackCleanupCookies: (request) => callbackCleanupCookies(ctx, request),
    exchangeCode: (input) => exchangeCode(ctx, input),
    refresh: (refreshToken, session) => refresh(ctx, refreshToken, session),
    verifyIdToken: (idToken, verifyOptions) => verifier.verifyIdToken(idToken, verifyOptions?.nonce),
    verifyAccessToken: (accessToken) => verifier.verifyAccessToken(accessToken),
    sessionCookie: (request, userId) => sessionCookie(ctx, request, userId),
    clearSessionCookie: (request) => clearSessionCookie(ctx, request),
    sessionUser: (request) => sessionUser(ctx, request),
  };
}
