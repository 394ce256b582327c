/**
 * The one object a login's functions share. createLogin (login.ts) builds it once at start-up, from the options and
 * what discovery found; the functions of sign-in.ts, session.ts, transaction-cookie.ts and redirect-uri.ts take it as
 * their first argument, so each can be read, and reached from a test, on its own rather than inside one closure.
 */
import type * as oidc from 'openid-client';
import type { LoginOptions } from './options.js';
import type { Sealer } from './sealed.js';
import type { TokenVerifier } from './tokens.js';

export interface LoginContext {
  /** The options as given to createLogin, already checked. */
  readonly options: LoginOptions;
  /** openid-client's client of the login server: its endpoints, and how this app authenticates at the token endpoint. */
  readonly config: oidc.Configuration;
  /** The discovery document, checked to name the configured issuer (its `issuer` is the only accepted `iss`). */
  readonly server: Readonly<oidc.ServerMetadata>;
  /** Checks ID and access tokens against the login JWKS (tokens.ts). */
  readonly verifier: TokenVerifier;
  /** Whether the client has a secret (HTTP Basic at the token endpoint) or is public (PKCE alone). */
  readonly confidential: boolean;
  /** How long a started login may take, in seconds: its transaction cookie's and store entry's life. */
  readonly transactionTtl: number;
  /** The session cookie's life in seconds; 0 when the login routes keep no session (`session: false`). */
  readonly sessionMaxAge: number;
  /** Seals transaction cookies; its key is not the session's, so neither cookie passes for the other. */
  readonly transactions: Sealer;
  /** Seals session cookies. */
  readonly sessions: Sealer;
  /** Transaction ids already used, each with when its cookie would expire (ms): a callback is used once only. */
  readonly usedTransactions: Map<string, number>;
  /** The scope of every authorization request (spec 4.1). */
  readonly scope: string;
}
