/**
 * Stable codes of every way a sign-in can fail. A code never changes meaning once released; new codes may be added.
 * The HTTP status is what the login routes answer with; the message is generic and safe to show a user. Details go
 * to {@link KybLoginError.detail} for logs and never contain a token, code, verifier or secret.
 *
 * @example
 * ```ts
 * LOGIN_ERRORS.state_mismatch.status // 400
 * ```
 */
export const LOGIN_ERRORS = {
  config_invalid: { status: 500, message: 'The login is misconfigured.' },
  discovery_failed: { status: 503, message: 'The login server\u2019s discovery document could not be fetched.' },
  issuer_mismatch: { status: 503, message: 'The login server\u2019s discovery document names another issuer.' },
  transaction_missing: {
    status: 400,
    message: 'This sign-in has no pending login transaction (expired, or started in another browser); start again.',
  },
  transaction_invalid: { status: 400, message: 'The login transaction could not be read; start again.' },
  transaction_replayed: { status: 400, message: 'This sign-in callback was already used; start again.' },
  // A callback request that cannot be the login server's answer: no or several codes, an `iss` (RFC 9207) missing or
  // naming another server. Anyone can make one, so it is the request's fault (400), never a 5xx that pages an operator.
  callback_invalid: {
    status: 400,
    message: 'The sign-in response is incomplete or did not come from the login server; start again.',
  },
  state_mismatch: {
    status: 400,
    message: 'The sign-in response does not belong to this browser\u2019s login (state mismatch); start again.',
  },
  authorization_denied: { status: 400, message: 'The login server did not authorize the sign-in.' },
  code_exchange_failed: { status: 400, message: 'The login server refused the authorization code; start again.' },
  // 500, not 400: the login server refused this app's own credentials, which no retry by the user can cure.
  client_auth_failed: {
    status: 500,
    message:
      'Sign-in is not available right now because of a problem on this site, not with your account; please try again later.',
  },
  token_invalid: { status: 401, message: 'The token could not be verified.' },
  token_expired: { status: 401, message: 'The token has expired.' },
  subject_invalid: { status: 401, message: 'The token\u2019s subject is not a svcid: identifier.' },
  token_missing: { status: 401, message: 'A bearer token is required.' },
  jwks_unavailable: { status: 503, message: 'The login server\u2019s keys could not be fetched; retry later.' },
  login_server_unavailable: { status: 503, message: 'The login server could not be reached; retry later.' },
  // A path redirectUri is resolved against the request's Host (X-Forwarded-Host with trustProxy): one that is no
  // host name is the request's fault (a client or a proxy sending junk), never a 5xx that reads as a server failure.
  host_invalid: {
    status: 400,
    message: 'This request\u2019s Host header is not a valid host name; open this site at its usual address.',
  },
  cross_site_request: {
    status: 403,
    message: 'This sign-out was sent from another site and was refused; use the sign-out button on this site.',
  },
  return_path_invalid: { status: 400, message: 'The return path must be a path on this site.' },
  user_store_failed: { status: 500, message: 'The user store failed during sign-in.' },
  internal_error: { status: 500, message: 'The sign-in failed unexpectedly.' },
} as const satisfies Record<string, { status: number; message: string }>;

/**
 * A stable login error code, e.g. `'state_mismatch'`.
 *
 * @example
 * ```ts
 * const retryable: LoginErrorCode[] = ['jwks_unavailable', 'login_server_unavailable', 'discovery_failed']
 * ```
 */
export type LoginErrorCode = keyof typeof LOGIN_ERRORS;

/**
 * Every failure of this package, with a stable {@link LoginErrorCode}. Options that cannot work throw it with code
 * `config_invalid` when the login is created, with the fix in the message.
 *
 * @example
 * ```ts
 * try { await login.finish({ url: req.url, header: (name) => req.get(name), encrypted: req.secure }) } catch (error) {
 *   if (error instanceof KybLoginError && error.code === 'state_mismatch') return restartLogin()
 *   throw error
 * }
 * ```
 */
export class KybLoginError extends Error {
  override readonly name = 'KybLoginError';
  readonly code: LoginErrorCode;
  /** The HTTP status the login routes answer with. */
  readonly status: number;
  /** What exactly failed, for logs; never contains a token, code, verifier or secret. */
  readonly detail: string | undefined;

  constructor(code: LoginErrorCode, message?: string, options?: { detail?: string; cause?: unknown }) {
    super(message ?? LOGIN_ERRORS[code].message, { cause: options?.cause });
    this.code = code;
    this.status = LOGIN_ERRORS[code].status;
    this.detail = options?.detail;
  }
}

/** Shorthand for a refusal with a detail for the logs. */
export function loginError(code: LoginErrorCode, detail?: string, cause?: unknown): KybLoginError {
  return new KybLoginError(code, undefined, { detail, cause });
}
