/**
 * Test helper: the sign-in driven against the login core directly, with the provider's pages driven over HTTP.
 * The callback is handed to the core as the framework would hand it over, so tests can alter it first.
 */
import * as oidc from 'openid-client';
import { expect } from 'vitest';
import { KybLoginError } from '../errors.js';
import type { LoginOptions } from '../options.js';
import { createLogin, type Login, type LoginRequest } from '../login.js';
import { startTestProvider, type TestProvider } from './provider.js';
import { approveAtProvider, UserAgent } from './user-agent.js';

/** The redirect URI the core tests register; nothing listens there, the tests hand the callback over themselves. */
export const REDIRECT_URI = 'http://127.0.0.1:9/auth/callback';
export const COOKIE_SECRET = 'test-cookie-secret-of-at-least-32-bytes!';

export function loginOptions(provider: TestProvider, overrides: Partial<LoginOptions> = {}): LoginOptions {
  return {
    authUrl: provider.issuer,
    clientId: provider.confidentialClient.clientId,
    clientSecret: provider.confidentialClient.clientSecret,
    redirectUri: REDIRECT_URI,
    audience: provider.audiences[0]!,
    secret: COOKIE_SECRET,
    allowInsecureRequests: true,
    ...overrides,
  };
}

/** A test provider that accepts {@link REDIRECT_URI}, and a login over it with the default test options. */
export async function startProviderAndLogin(): Promise<{ provider: TestProvider; login: Login }> {
  const provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
  return { provider, login: await createLogin(loginOptions(provider)) };
}

/** A request as an adapter would describe it; `setCookies` are Set-Cookie values the browser got before. */
export function loginRequest(
  url: string | URL,
  setCookies: string[] = [],
  headers: Record<string, string> = {},
): LoginRequest {
  const u = new URL(url, 'http://127.0.0.1:9');
  const cookie = setCookies.map((c) => c.split(';')[0]).join('; ');
  const all: Record<string, string> = { host: u.host, ...(cookie ? { cookie } : {}), ...headers };
  return { url: u.pathname + u.search, header: (name) => all[name.toLowerCase()], encrypted: u.protocol === 'https:' };
}

/**
 * Starts a login, approves it at the provider as `address`, and returns the callback the browser would send, with the
 * start's Set-Cookie values (the transaction cookie first, then the binding cookie).
 */
export async function approvedCallback(
  login: Login,
  options: { returnTo?: string; address?: string; agent?: UserAgent } = {},
): Promise<{ callback: LoginRequest; callbackUrl: URL; setCookie: string[]; authorizationUrl: URL }> {
  const start = await login.start(
    loginRequest('/auth/login'),
    options.returnTo === undefined ? {} : { returnTo: options.returnTo },
  );
  const callbackUrl = await approveAtProvider(options.agent ?? new UserAgent(), start.url, options.address);
  return {
    callback: loginRequest(callbackUrl, start.setCookie),
    callbackUrl,
    setCookie: start.setCookie,
    authorizationUrl: start.url,
  };
}

/** Runs `promise` and returns the KybLoginError it rejects with (fails the test when it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string; detail?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; detail?: string };
  }
  throw new Error('expected a refusal, but it succeeded');
}

/** The error `call` throws, which must be config_invalid (a refusal of options or arguments at set-up). */
export function configError(call: () => unknown): KybLoginError {
  try {
    call();
  } catch (error) {
    return expectConfigInvalid(error);
  }
  throw new Error('the call accepted its arguments');
}

/** The error `pending` rejects with, which must be config_invalid (`createLogin` refusing its options). */
export async function configRefusal(pending: Promise<unknown>): Promise<KybLoginError> {
  try {
    await pending;
  } catch (error) {
    return expectConfigInvalid(error);
  }
  throw new Error('the options were accepted');
}

function expectConfigInvalid(error: unknown): KybLoginError {
  expect(error).toBeInstanceOf(KybLoginError);
  expect((error as KybLoginError).code).toBe('config_invalid');
  return error as KybLoginError;
}

/**
 * A code obtained by the browser with its own PKCE verifier, the backend-exchange setup: discovery, the authorization
 * URL with the service's parameters, the provider's pages approved. The backend then calls `exchangeCode` with both.
 */
export async function browserCode(provider: TestProvider): Promise<{ code: string; codeVerifier: string }> {
  const browser = await oidc.discovery(
    new URL(provider.issuer),
    provider.confidentialClient.clientId,
    undefined,
    oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(browser, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid offline offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    prompt: 'consent',
    access_type: 'offline',
    audience: provider.audiences[0]!,
  });
  return { code: (await approveAtProvider(new UserAgent(), url)).searchParams.get('code')!, codeVerifier };
}
