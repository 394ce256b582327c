/**
 * `@kyb-webhooks/login/testing`: a local login server configured like the service's (panva's oidc-provider on
 * 127.0.0.1) and a small HTTP browser that signs in through it, for the examples' demo and for your own tests of
 * "Sign in with the service". Needs `oidc-provider` installed (an optional peer dependency). Never for production.
 */
import { startTestProvider, TEST_ADDRESS, type TestProvider, type TestProviderOptions } from './provider.js';

export { approveAtProvider, UserAgent } from './user-agent.js';
export { signInThroughApp, type SignInResult, type SignInStep } from './sign-in.js';

/**
 * Options of {@link startLoginProvider}: the redirect URIs registered for its two clients, and optionally the
 * audiences, the access and ID token lifetimes (seconds) and the port (default a free one).
 *
 * @example
 * ```ts
 * const options: LoginProviderOptions = { redirectUris: ['http://127.0.0.1:3000/auth/callback'] }
 * ```
 */
export type LoginProviderOptions = TestProviderOptions;

/**
 * A running local login server: its `issuer` (use it as `authUrl`, with `allowInsecureRequests: true`: it is plain
 * http on 127.0.0.1), a confidential client (HTTP Basic), a public client, the registered `audiences`, and `stop()`.
 *
 * @example
 * ```ts
 * const provider: LoginProvider = await startLoginProvider({ redirectUris })
 * console.log(provider.issuer, provider.confidentialClient.clientId)
 * ```
 */
export type LoginProvider = TestProvider;

/**
 * The address the provider's login form approves by default; the user id of a default sign-in.
 *
 * @example
 * ```ts
 * expect(page).toContain(LOGIN_TEST_ADDRESS)
 * ```
 */
export const LOGIN_TEST_ADDRESS: string = TEST_ADDRESS;

/**
 * Starts a login server like the service's on 127.0.0.1 (a free port unless `port` is given): discovery by issuer, `/oauth2/auth`,
 * `/oauth2/token`, `/.well-known/jwks.json`, subjects `svcid:0x…`, PKCE S256 required, `audience` checked against
 * the client's audiences, `access_type=offline`, consent on every sign-in, refresh tokens with `offline_access`, JWT
 * access tokens for the audience. Its login page stands in for the wallet approval: a form with the address.
 *
 * @example
 * ```ts
 * import { createLogin } from '@kyb-webhooks/login'
 * import { signInThroughApp, startLoginProvider } from '@kyb-webhooks/login/testing'
 *
 * const provider = await startLoginProvider({ redirectUris: [`${origin}/auth/callback`] })
 * const login = await createLogin({
 *   authUrl: provider.issuer,
 *   clientId: provider.confidentialClient.clientId,
 *   clientSecret: provider.confidentialClient.clientSecret,
 *   redirectUri: `${origin}/auth/callback`,
 *   audience: provider.audiences[0]!,
 *   secret: 'a test cookie secret of at least 32 bytes',
 *   allowInsecureRequests: true,
 * })
 * // … mount the login routes on the app listening on origin …
 * const { landed } = await signInThroughApp(`${origin}/auth/login?returnTo=/account`)
 * await provider.stop()
 * ```
 */
export function startLoginProvider(options: LoginProviderOptions): Promise<LoginProvider> {
  return startTestProvider(options);
}
