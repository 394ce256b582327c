/**
 * The values the login API takes and gives: the request it reads, the start of a login, the tokens and the result of
 * a sign-in, and the session a refresh continues. Kept apart from login.ts so that the modules that implement the
 * API (sign-in.ts, session.ts, the cookie modules) can use them without importing createLogin.
 */
import type { VerifiedClaims } from './tokens.js';

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
