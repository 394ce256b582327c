/**
 * The sign-in (spec 4.1): the start of a login (the authorization URL, with a fresh state, nonce and PKCE verifier
 * kept in the transaction cookie), its callback (the transaction taken back, the callback's parameters checked, the
 * code exchanged, the ID token verified), the backend exchange of a code the browser got itself, and the user
 * recorded through `upsertUser`.
 */
import * as oidc from 'openid-client';
import type { LoginContext } from './context.js';
import { KybLoginError, loginError } from './errors.js';
import { redirectUriSuffixProblem } from './options.js';
import { redirectUriFor } from './redirect-uri.js';
import { safeReturnPath } from './return-path.js';
import { authorizationCodeGrant, safeWord, tokensOf } from './token-endpoint.js';
import { clearTransactionCookie, pendTransaction, takeTransaction } from './transaction-cookie.js';
import type { LoginTransaction } from './transaction-store.js';
import type { LoginRequest, LoginResult, LoginStart, LoginTokens } from './types.js';

/** Starts a login (`Login.start`, documented in login.ts). */
export async function startLogin(
  ctx: LoginContext,
  request: LoginRequest,
  startOptions: { returnTo?: string } = {},
): Promise<LoginStart> {
  const returnTo = startOptions.returnTo === undefined ? '/' : safeReturnPath(startOptions.returnTo);
  if (returnTo === undefined) throw loginError('return_path_invalid', 'returnTo is not a same-origin path');
  const redirectUri = redirectUriFor(ctx, request);
  const transaction: LoginTransaction = {
    state: oidc.randomState(),
    codeVerifier: oidc.randomPKCECodeVerifier(),
    nonce: oidc.randomNonce(),
    returnTo,
    redirectUri,
  };
  const url = oidc.buildAuthorizationUrl(ctx.config, {
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: ctx.scope,
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(transaction.codeVerifier),
    code_challenge_method: 'S256',
    prompt: 'consent',
    access_type: 'offline',
    audience: ctx.options.audience,
  });
  return { url, setCookie: await pendTransaction(ctx, request, transaction) };
}

/** Completes a login on the callback request (`Login.finish`). */
export async function finishLogin(
  ctx: LoginContext,
  request: LoginRequest,
): Promise<LoginResult & { returnTo: string; setCookie: string }> {
  const { server } = ctx;
  const setCookie = clearTransactionCookie(ctx, request);
  const query = new URL(request.url, 'http://callback.invalid').searchParams;
  const states = query.getAll('state');
  if (states.length === 0) throw loginError('state_mismatch', 'the callback has no state');
  if (states.length > 1) throw loginError('state_mismatch', 'the callback has several states');
  const transaction = await takeTransaction(ctx, request, states[0]!);
  // An error answer is checked for its iss too (RFC 9207 2.4): one from another server is not this login's refusal.
  checkCallbackIssuer(server, query);
  if (query.has('error'))
    throw loginError('authorization_denied', `the login server answered ${safeWord(query.get('error'))}`);
  // Malformed answers anyone can send are the request's fault (400), checked here rather than left to
  // openid-client, whose refusals of them would read as a token or issuer problem (401, 503).
  const codes = query.getAll('code');
  if (codes.length !== 1 || codes[0] === '')
    throw loginError(
      'callback_invalid',
      codes.length > 1 ? 'the callback has several codes' : 'the callback has no code',
    );
  // The token request must repeat the authorization request's redirect_uri exactly, whatever host or proxy the
  // callback came through: build the URL openid-client reads it from out of the stored one.
  const callbackUrl = new URL(transaction.redirectUri);
  callbackUrl.search = query.toString();
  const response = await authorizationCodeGrant(ctx, callbackUrl, {
    pkceCodeVerifier: transaction.codeVerifier,
    expectedState: transaction.state,
    expectedNonce: transaction.nonce,
  });
  return { ...(await completeSignIn(ctx, response, transaction.nonce)), returnTo: transaction.returnTo, setCookie };
}

/** The callback's `iss` (RFC 9207): at most one, the login server's issuer, and present when the server says it sends it. */
function checkCallbackIssuer(server: Readonly<oidc.ServerMetadata>, query: URLSearchParams): void {
  const issuers = query.getAll('iss');
  if (issuers.length > 1) throw loginError('callback_invalid', 'the callback has several iss parameters');
  if (issuers.length === 1 && issuers[0] !== server.issuer)
    throw loginError('callback_invalid', 'the callback iss (RFC 9207) is not the login server\u2019s issuer');
  if (issuers.length === 0 && server.authorization_response_iss_parameter_supported === true) {
    throw loginError(
      'callback_invalid',
      'the callback has no iss, which the login server announces it always sends (RFC 9207)',
    );
  }
}

/** The backend exchange of a code and PKCE verifier the browser got itself (`Login.exchangeCode`). */
export async function exchangeCode(
  ctx: LoginContext,
  input: { code: string; codeVerifier: string; nonce?: string; redirectUri?: string; iss?: string },
): Promise<LoginResult> {
  if (
    typeof input?.code !== 'string' ||
    input.code === '' ||
    typeof input.codeVerifier !== 'string' ||
    input.codeVerifier === ''
  ) {
    throw loginError('code_exchange_failed', 'exchangeCode needs a code and a codeVerifier');
  }
  const callbackUrl = exchangeRedirectUri(input.redirectUri, ctx.options.redirectUri);
  // The browser checked the authorization response itself; `iss` (RFC 9207) is the one it got, or the issuer.
  callbackUrl.search = new URLSearchParams({ code: input.code, iss: input.iss ?? ctx.server.issuer }).toString();
  const response = await authorizationCodeGrant(ctx, callbackUrl, {
    pkceCodeVerifier: input.codeVerifier,
    ...(input.nonce ? { expectedNonce: input.nonce } : {}),
  });
  return completeSignIn(ctx, response, input.nonce);
}

/** The redirect URI of a backend exchange: the one the browser used, checked, or else the configured absolute one. */
function exchangeRedirectUri(given: string | undefined, configured: string): URL {
  if (given === undefined || given === null) {
    if (!configured.startsWith('/')) return new URL(configured);
    throw new KybLoginError(
      'config_invalid',
      'exchangeCode needs the absolute redirectUri the browser used, because the configured redirectUri is a path.',
    );
  }
  // Often relayed from the browser: a value that is no http(s) URL is bad input, refused like a missing code.
  if (typeof given !== 'string' || !URL.canParse(given) || !/^https?:$/.test(new URL(given).protocol))
    throw loginError('code_exchange_failed', 'exchangeCode needs an absolute http(s) redirectUri');
  // A query or fragment is in the URI the app registered: a set-up the login server would always refuse.
  const problem = redirectUriSuffixProblem("exchangeCode's redirectUri", given);
  if (problem) throw new KybLoginError('config_invalid', problem);
  return new URL(given);
}

/** A code exchange's answer made a sign-in: its ID token verified, and the user recorded through `upsertUser`. */
async function completeSignIn(
  ctx: LoginContext,
  response: oidc.TokenEndpointResponse,
  nonce: string | undefined,
): Promise<LoginResult> {
  const { idToken, ...rest } = tokensOf(response);
  if (idToken === undefined) throw loginError('token_invalid', 'the token response has no id_token');
  const tokens: LoginTokens = { ...rest, idToken };
  // openid-client checked the ID token's claims; jose now checks its signature against the login JWKS too.
  const { userId, claims } = await ctx.verifier.verifyGrantedIdToken(tokens.idToken, nonce);
  let isNewUser: boolean | undefined;
  if (ctx.options.upsertUser) {
    try {
      isNewUser = (await ctx.options.upsertUser(userId, claims)) === true;
    } catch (error) {
      throw new KybLoginError('user_store_failed', undefined, { detail: 'upsertUser threw', cause: error });
    }
  }
  return { userId, isNewUser, tokens, claims };
}
