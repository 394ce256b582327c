/**
 * The token endpoint (spec 2.2, 5.1): the code exchange and the refresh grant through openid-client, the token
 * response read into {@link LoginTokens}, and every way the endpoint or openid-client can fail mapped to a stable
 * code whose detail is safe to log.
 */
import * as oidc from 'openid-client';
import type { LoginContext } from './context.js';
import { KybLoginError, loginError } from './errors.js';
import { foreignIssuer } from './tokens.js';
import type { LoginTokens } from './types.js';

/** The tokens of a token response; a refresh answer may lack the ID token (OIDC Core 12.2). */
export type GrantedTokens = Omit<LoginTokens, 'idToken'> & { idToken?: string };

/** Exchanges an authorization code (spec 4.1); openid-client checks the response against `checks`. */
export async function authorizationCodeGrant(
  ctx: LoginContext,
  callbackUrl: URL,
  checks: oidc.AuthorizationCodeGrantChecks,
): Promise<oidc.TokenEndpointResponse> {
  try {
    return await oidc.authorizationCodeGrant(ctx.config, callbackUrl, { ...checks, idTokenExpected: true });
  } catch (error) {
    throw protocolError(error, ctx.confidential, 'authorization_code');
  }
}

/** Uses a refresh token. */
export async function refreshTokenGrant(ctx: LoginContext, refreshToken: string): Promise<oidc.TokenEndpointResponse> {
  try {
    return await oidc.refreshTokenGrant(ctx.config, refreshToken);
  } catch (error) {
    throw protocolError(error, ctx.confidential, 'refresh_token');
  }
}

/** The tokens of a token response; without a new refresh token the previous one stays (it was not rotated). */
export function tokensOf(response: oidc.TokenEndpointResponse, previousRefreshToken?: string): GrantedTokens {
  if ((response.token_type ?? '').toLowerCase() !== 'bearer')
    throw loginError('token_invalid', 'token_type is not bearer');
  if (response.id_token !== undefined && typeof response.id_token !== 'string')
    throw loginError('token_invalid', 'the id_token is not a string');
  const refreshToken = response.refresh_token ?? previousRefreshToken;
  return {
    accessToken: response.access_token,
    ...(response.id_token !== undefined ? { idToken: response.id_token } : {}),
    ...(refreshToken ? { refreshToken } : {}),
    expiresIn: typeof response.expires_in === 'number' ? response.expires_in : 0,
    tokenType: 'bearer',
    ...(typeof response.scope === 'string' ? { scope: response.scope } : {}),
  };
}

/** An OAuth error code from the server, reduced to a safe word for the detail. */
export function safeWord(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? value : 'an error';
}

/**
 * openid-client's failures → stable codes. The error itself is not kept as `cause`: its cause chain can hold the
 * token response body.
 */
function protocolError(
  error: unknown,
  confidential: boolean,
  grant: 'authorization_code' | 'refresh_token',
): KybLoginError {
  if (error instanceof KybLoginError) return error;
  if (grantNotAllowed(error)) return grantRefused(grant);
  const refused = refusedClient(error);
  if (refused) return clientAuthFailed(refused, confidential);
  if (error instanceof oidc.ResponseBodyError)
    return loginError('code_exchange_failed', `the token endpoint answered ${safeWord(error.error)} (${error.status})`);
  if (error instanceof oidc.AuthorizationResponseError)
    return loginError('authorization_denied', `the login server answered ${safeWord(error.error)}`);
  const code = (error as { code?: string })?.code;
  const message = (error as Error)?.message ?? '';
  const cause = (error as { cause?: { message?: string; code?: string } })?.cause;
  const inner = cause?.message ?? '';
  // Only the "exp" claim's failure is an expiry: a token not valid yet ("nbf") or issued too long ago ("iat") is
  // invalid, and every one of oauth4webapi's messages starts "unexpected", which a bare /exp/ matched.
  if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED')
    return loginError(/"exp"/.test(inner) ? 'token_expired' : 'token_invalid', `id_token: ${inner.slice(0, 120)}`);
  // A body that is not JSON (a proxy's page, a truncated answer) is the server's fault, not the token's.
  if (code === 'OAUTH_PARSE_ERROR' && /"response" body/.test(inner || message))
    return loginError('login_server_unavailable', `token endpoint: ${code}`);
  if (
    code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' ||
    code === 'OAUTH_INVALID_RESPONSE' ||
    code === 'OAUTH_PARSE_ERROR' ||
    code === 'OAUTH_UNSUPPORTED_OPERATION'
  ) {
    // The ID token's iss (finish checks the callback's RFC 9207 iss itself, before the exchange): the token's fault.
    if (/"iss"/.test(inner))
      return /response parameter/.test(inner)
        ? loginError('callback_invalid', `response: ${inner.slice(0, 120)}`)
        : foreignIssuer('id_token', `id_token: ${inner.slice(0, 120)}`);
    if (/"state"/.test(inner)) return loginError('state_mismatch', `response: ${inner.slice(0, 120)}`);
    return loginError('token_invalid', `response: ${(inner || message).slice(0, 120)}`);
  }
  if (
    code === 'OAUTH_TIMEOUT' ||
    code === 'OAUTH_ABORT' ||
    error instanceof TypeError ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    code === 'OAUTH_RESPONSE_IS_NOT_JSON'
  ) {
    return loginError('login_server_unavailable', `token endpoint: ${safeWord(code ?? (error as Error)?.name)}`);
  }
  // openid-client's "something went wrong": a ClientError without a code around what it did not recognise, which on
  // the way to the token endpoint is a `fetch` option that threw something other than a TypeError (a proxy's agent,
  // a mock). No answer came back, so it is the server's unavailability, not a code to start again for.
  if (error instanceof oidc.ClientError && code === undefined && error.cause instanceof Error)
    return loginError('login_server_unavailable', `token endpoint: ${safeWord(error.cause.name)}`);
  return loginError('code_exchange_failed', `token endpoint: ${safeWord(code)}`);
}

/**
 * How the token endpoint refused the client itself (not the grant), as a safe `error (status)` for the detail, or
 * undefined. RFC 6749 5.2: `invalid_client`, with 401 and a WWW-Authenticate challenge when the client sent HTTP
 * Basic, and possibly 400 otherwise; any 401 there means the same, whatever its body.
 */
function refusedClient(error: unknown): string | undefined {
  if (error instanceof oidc.ResponseBodyError) {
    return error.status === 401 || error.error === 'invalid_client'
      ? `${safeWord(error.error)} (${error.status})`
      : undefined;
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
  if (error instanceof oidc.WWWAuthenticateChallengeError)
    return error.cause.some((challenge) => challenge.parameters.error === 'unauthorized_client');
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
