/**
 * After the sign-in: the session cookie the login routes keep (sealed, holding only the user id), signing out, and
 * the refresh grant, which may only ever continue the same session (OIDC Core 12.2).
 */
import type { LoginContext } from './context.js';
import { readCookie, serializeCookie } from './cookies.js';
import { KybLoginError, loginError } from './errors.js';
import { secureFor } from './redirect-uri.js';
import { refreshTokenGrant, tokensOf, type GrantedTokens } from './token-endpoint.js';
import { userIdFromSubject, type VerifiedClaims } from './tokens.js';
import type { LoginRequest, RefreshSession } from './types.js';

/** The session cookie for a user (`Login.sessionCookie`). */
export async function sessionCookie(ctx: LoginContext, request: LoginRequest, userId: string): Promise<string> {
  const secure = secureFor(ctx, request);
  const sealed = await ctx.sessions.seal({ sub: userId }, ctx.sessionMaxAge);
  return serializeCookie(sessionCookieName(ctx, secure), sealed, {
    path: '/',
    maxAgeSeconds: ctx.sessionMaxAge,
    secure,
  });
}

/** The Set-Cookie value that signs the user out (`Login.clearSessionCookie`). */
export function clearSessionCookie(ctx: LoginContext, request: LoginRequest): string {
  const secure = secureFor(ctx, request);
  return serializeCookie(sessionCookieName(ctx, secure), '', { path: '/', maxAgeSeconds: 0, secure });
}

/** The signed-in user id from the session cookie, or undefined (`Login.sessionUser`). */
export async function sessionUser(ctx: LoginContext, request: LoginRequest): Promise<string | undefined> {
  if (ctx.sessionMaxAge <= 0) return undefined;
  const value = readCookie(request.header('cookie'), sessionCookieName(ctx, secureFor(ctx, request)));
  if (!value) return undefined;
  const opened = await ctx.sessions.open(value);
  return typeof opened === 'object' && typeof opened.sub === 'string' ? opened.sub : undefined;
}

function sessionCookieName(ctx: LoginContext, secure: boolean): string {
  return ctx.options.cookies?.sessionName ?? (secure ? '__Host-kyb-login-session' : 'kyb-login-session');
}

/** Uses a refresh token for the session it continues (`Login.refresh`). */
export async function refresh(
  ctx: LoginContext,
  refreshToken: string,
  session: RefreshSession,
): Promise<{ tokens: GrantedTokens; userId: string | undefined; claims: VerifiedClaims | undefined }> {
  if (typeof refreshToken !== 'string' || refreshToken === '')
    throw loginError('token_missing', 'refresh needs a refresh token');
  // Before the token endpoint: a call that cannot be checked must not spend the refresh token.
  checkRefreshSession(session);
  const response = await refreshTokenGrant(ctx, refreshToken);
  const tokens = tokensOf(response, refreshToken);
  if (tokens.idToken === undefined) return { tokens, userId: undefined, claims: undefined };
  const verified = await ctx.verifier.verifyGrantedIdToken(tokens.idToken);
  const changed = changedSessionClaim(verified.claims, session, ctx.server.issuer);
  if (changed)
    throw loginError('token_invalid', `the refreshed id_token's ${changed} is not the session's (OIDC Core 12.2)`);
  return { tokens, userId: verified.userId, claims: verified.claims };
}

/** Throws `config_invalid`, with the call to write, unless `session` is a {@link RefreshSession}. */
function checkRefreshSession(session: unknown): void {
  const s = session as { claims?: Record<string, unknown>; userId?: unknown } | undefined;
  const claims = s?.claims;
  const aud = claims?.aud;
  const validClaims =
    typeof claims?.iss === 'string' &&
    typeof claims.sub === 'string' &&
    (typeof aud === 'string' || Array.isArray(aud));
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
function changedSessionClaim(
  claims: VerifiedClaims,
  session: RefreshSession,
  issuer: string,
): 'iss' | 'sub' | 'aud' | undefined {
  if (!('claims' in session)) {
    if (claims.iss !== issuer) return 'iss';
    return userIdFromSubject(claims.sub) === session.userId ? undefined : 'sub';
  }
  const original = session.claims;
  if (claims.iss !== original.iss) return 'iss';
  if (claims.sub !== original.sub) return 'sub';
  const audiences = (aud: string | string[] | undefined): string =>
    JSON.stringify([...new Set([aud ?? []].flat())].sort());
  return audiences(claims.aud) === audiences(original.aud) ? undefined : 'aud';
}
