import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { KybLoginError, loginError } from './errors.js';
import { JwksFetchFailed, loginKeys, safeName, type LoginKeys } from './login-jwks.js';

/**
 * The claims of a verified token; `sub` is always a `svcid:` identifier.
 *
 * @example
 * ```ts
 * const { claims } = await login.verifyAccessToken(token)
 * console.log(claims.sub, new Date(claims.exp * 1000))
 * ```
 */
export interface VerifiedClaims extends JWTPayload {
  iss: string;
  sub: string;
  exp: number;
  iat: number;
}

/**
 * A verified token's user: the address of its `svcid:` subject (spec 1.4), and its claims.
 *
 * @example
 * ```ts
 * const { userId }: VerifiedUser = await login.verifyIdToken(idToken)
 * ```
 */
export interface VerifiedUser {
  /** The stable user identifier: the token's `sub` without the `svcid:` prefix. */
  userId: string;
  claims: VerifiedClaims;
}

const SVCID = 'svcid:';

/**
 * The user identifier of a `sub` claim (spec 1.4): the part after the literal `svcid:` prefix. Anything else is not a
 * subject the service issues.
 *
 * @returns the user id, or undefined when `sub` is not of the form `svcid:<address>`.
 *
 * @example
 * ```ts
 * userIdFromSubject('svcid:0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c') // '0x5a0b…9c4c'
 * userIdFromSubject('0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c')       // undefined
 * ```
 */
export function userIdFromSubject(sub: unknown): string | undefined {
  if (typeof sub !== 'string' || !sub.startsWith(SVCID)) return undefined;
  const address = sub.slice(SVCID.length);
  // eslint-disable-next-line no-control-regex
  return /^[^\s\u0000-\u001f\u007f]+$/.test(address) ? address : undefined;
}

export interface TokenVerifierOptions {
  issuer: string;
  jwksUri: string;
  clientId: string;
  audience: string;
  algorithm: string;
  clockToleranceSeconds: number;
  jwksCooldownMs: number;
  /** How long a JWKS fetch may take: the login's `timeoutSeconds`. */
  jwksTimeoutMs?: number;
  fetch: typeof fetch | undefined;
}

/**
 * Signature and claim checks of the login server's JWTs with jose: the key by `kid` from the login JWKS (login-jwks.ts:
 * cached, refreshed, the last good set kept through an outage), the algorithm pinned (never read from the header), `iss`
 * equal to the discovery document's issuer, the audience, `exp`/`iat` with a small leeway, and `typ` checked first so
 * a token of another kind (a KYB attestation, an access token as an ID token) is refused before anything else.
 */
export class TokenVerifier {
  /** The login key set (login-jwks.ts): `reload()` fetches it at start-up. */
  readonly jwks: LoginKeys;

  constructor(private readonly options: TokenVerifierOptions) {
    this.jwks = loginKeys({
      jwksUri: options.jwksUri,
      cooldownMs: options.jwksCooldownMs,
      timeoutMs: options.jwksTimeoutMs,
      fetch: options.fetch,
    });
  }

  /** Verifies an ID token for this client: aud must contain the client id. */
  verifyIdToken(token: string, nonce?: string): Promise<VerifiedUser> {
    return this.verify(token, 'id_token', this.options.clientId, ['JWT'], nonce);
  }

  /**
   * Verifies an ID token the token endpoint just granted (a sign-in, a refresh). A `kid` the cached set lacks is then
   * a key rotation, not a forgery (the token came from the login server itself, over TLS, for this client's code), so
   * the set is fetched again at once, even within the cooldown, and the token checked once more: without it a sign-in
   * in the first `jwksCooldownMs` after a rotation was refused 401 and its code spent. A token from anyone else
   * (`verifyIdToken`, bearer tokens) keeps the cooldown, which bounds the fetches a stream of unknown kids could cause.
   */
  async verifyGrantedIdToken(token: string, nonce?: string): Promise<VerifiedUser> {
    try {
      return await this.verifyIdToken(token, nonce);
    } catch (error) {
      if (!(error instanceof KybLoginError && error.cause instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      try {
        await this.jwks.reload();
      } catch (failure) {
        throw verificationError('id_token', failure); // the set could not be had: 503 jwks_unavailable, not 500
      }
      return this.verifyIdToken(token, nonce);
    }
  }

  /** Verifies a JWT access token for the configured audience (RFC 9068 `at+jwt`, or a plain JWT). */
  verifyAccessToken(token: string): Promise<VerifiedUser> {
    return this.verify(
      token,
      'access_token',
      this.options.audience,
      ['AT+JWT', 'APPLICATION/AT+JWT', 'JWT'],
      undefined,
    );
  }

  private async verify(
    token: string,
    kind: string,
    audience: string,
    types: string[],
    nonce: string | undefined,
  ): Promise<VerifiedUser> {
    if (typeof token !== 'string' || token.length === 0) throw loginError('token_missing', `${kind} is missing`);
    let typ: unknown;
    try {
      typ = decodeProtectedHeader(token).typ;
    } catch {
      throw loginError('token_invalid', `${kind} is not a JWS`);
    }
    if (typ !== undefined && (typeof typ !== 'string' || !types.includes(typ.toUpperCase()))) {
      throw loginError(
        'token_invalid',
        `${kind} has typ ${typeof typ === 'string' ? JSON.stringify(typ.slice(0, 40)) : typeof typ}`,
      );
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks.getKey, {
        algorithms: [this.options.algorithm],
        issuer: this.options.issuer,
        audience,
        clockTolerance: this.options.clockToleranceSeconds,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      }));
    } catch (error) {
      throw verificationError(kind, error);
    }
    if (nonce !== undefined && payload.nonce !== nonce)
      throw loginError('token_invalid', `${kind} nonce does not match the login transaction`);
    // With several audiences, the ID token must name this client as its authorized party, and an azp present must be
    // this client whatever the audience (OIDC Core 3.1.3.7, points 4 and 5).
    if (kind === 'id_token' && (payload.azp !== undefined || (Array.isArray(payload.aud) && payload.aud.length > 1))) {
      if (payload.azp !== this.options.clientId) throw loginError('token_invalid', `${kind} azp is not this client`);
    }
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + this.options.clockToleranceSeconds) {
      throw loginError('token_invalid', `${kind} iat is in the future`);
    }
    const userId = userIdFromSubject(payload.sub);
    if (userId === undefined) throw loginError('subject_invalid', `${kind} sub lacks the svcid: prefix`);
    return { userId, claims: payload as VerifiedClaims };
  }
}

/** jose's failure → a stable code; the detail names the check, never a claim value or the token. */
function verificationError(kind: string, error: unknown): KybLoginError {
  if (error instanceof JwksFetchFailed) return loginError('jwks_unavailable', `${kind}: ${error.message}`);
  if (error instanceof joseErrors.JWTExpired) return loginError('token_expired', `${kind} exp is past`);
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return foreignIssuer(kind, `${kind} claim iss failed: ${error.reason}`);
    return loginError('token_invalid', `${kind} claim ${error.claim} failed: ${error.reason}`);
  }
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid)
    return loginError('jwks_unavailable', `${kind}: ${error.code}`);
  // An unknown kid keeps jose's error as the cause (it holds nothing of the token): verifyGrantedIdToken looks for it.
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return loginError('token_invalid', `${kind}: ${error.code}`, error);
  if (error instanceof joseErrors.JOSEError) return loginError('token_invalid', `${kind}: ${error.code}`);
  // Neither jose's refusal nor a failed JWKS fetch (those are JwksFetchFailed): unexpected, so not the token's fault.
  return new KybLoginError('internal_error', undefined, {
    detail: `${kind}: verification failed unexpectedly (${safeName(error)})`,
    cause: error,
  });
}

/**
 * A token whose `iss` is not the discovery document's issuer: the token's fault, so 401 `token_invalid` with a message
 * about the token, never `issuer_mismatch` (503, about the discovery document at start-up), which would send an
 * operator looking for a configuration problem that anyone able to hand over a token can fake.
 */
export function foreignIssuer(kind: string, detail: string): KybLoginError {
  const token = kind === 'id_token' ? 'ID token' : 'access token';
  return new KybLoginError(
    'token_invalid',
    `The ${token} was not issued by this site\u2019s login server (its iss is another issuer).`,
    { detail },
  );
}
