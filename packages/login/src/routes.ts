import { KybLoginError, LOGIN_ERRORS, loginError } from './errors.js';
import type { Login, LoginRequest, LoginResult } from './login.js';
import { safeReturnPath } from './return-path.js';
import { checkLoginRoutesArguments } from './route-options.js';
import type { VerifiedUser } from './tokens.js';

/**
 * A framework-neutral answer; each adapter writes it with its framework's own calls.
 *
 * @example
 * ```ts
 * const answer: LoginResponse = await routes.start(request, req)
 * res.writeHead(answer.status, answer.headers.flat()).end(answer.body)
 * ```
 */
export interface LoginResponse {
  status: number;
  /** In order; Set-Cookie may repeat. */
  headers: Array<[string, string]>;
  body?: string;
}

/**
 * Options shared by every framework's login routes. `Native` is the framework's request context (Express `req`,
 * Fastify `request`, Koa `ctx`, Hono `c`).
 *
 * @example
 * ```ts
 * const options: LoginRoutesOptions<express.Request> = {
 *   onLogin: async ({ userId, isNewUser, tokens }, req) => { if (isNewUser) await welcome(userId) },
 * }
 * ```
 */
export interface LoginRoutesOptions<Native> {
  /**
   * Called after every successful sign-in, before the session cookie is set and the browser returns. Keep the tokens
   * here if the app calls APIs for the user. Return a same-origin path to send the browser somewhere else.
   * An error it throws fails the sign-in with 500 `internal_error` (the error is the `cause` given to onError).
   */
  onLogin?: (result: LoginResult, native: Native) => void | string | Promise<void | string>;
  /**
   * Called with every failed login route request, e.g. to log `error.code` and `error.detail` (never secret).
   * Without it, each failure of this server's own (a 5xx: configuration, login server, user store) is printed as one
   * line on `console.error`, and the user's own (4xx) are not; pass your logger to replace that, `() => {}` to
   * silence it.
   */
  onError?: (error: KybLoginError, native: Native) => void;
}

/**
 * The user a guard accepted, with where it came from.
 *
 * @example
 * ```ts
 * const user: AuthenticatedUser = req.kybUser! // { userId: '0x5a0b…', via: 'bearer', claims }
 * ```
 */
export interface AuthenticatedUser {
  userId: string;
  /** 'bearer' for a verified access token, 'session' for the login routes' session cookie. */
  via: 'bearer' | 'session';
  /** The access token's verified claims (bearer only). */
  claims?: VerifiedUser['claims'];
}

/**
 * Options of the `requireUser` guards.
 *
 * @example
 * ```ts
 * app.get('/api/me', requireUser(login, { session: true }), handler)
 * ```
 */
export interface RequireUserOptions {
  /**
   * Also accept the session cookie of the login routes when there is no bearer token (default false: API routes
   * take bearer tokens). The cookie is SameSite=Lax, so other sites cannot use it in cross-site POSTs.
   */
  session?: boolean;
  /**
   * For pages: the path of the login start route (e.g. `'/auth/login'`). A request without a bearer token or a valid
   * session is then answered 303 to it with `?returnTo=` the requested path, so the user signs in and comes back,
   * instead of a 401. Needs `session: true` (without it the user would come back to the same refusal). Refusals of a
   * credential that was sent (an invalid bearer token) and 503s are answered as without it.
   */
  redirectToLogin?: string;
}

/**
 * The routes every adapter mounts, as framework-neutral functions: what a mount for another framework builds on.
 *
 * @example
 * ```ts
 * const routes = new LoginRoutes<IncomingMessage>(login, { onLogin: (result) => console.log(result.userId) })
 * const answer = await routes.callback({ url: req.url!, header: (n) => req.headers[n] as string, encrypted: false }, req)
 * ```
 */
export class LoginRoutes<Native> {
  constructor(
    readonly login: Login,
    private readonly options: LoginRoutesOptions<Native> = {},
  ) {
    checkLoginRoutesArguments(login, options);
  }

  /** GET start: redirect to the login server. `?returnTo=/path` names where to come back (same origin only). */
  async start(request: LoginRequest, native: Native): Promise<LoginResponse> {
    try {
      const returnTo = new URL(request.url, 'http://request.invalid').searchParams.get('returnTo') ?? undefined;
      const { url, setCookie } = await this.login.start(request, { returnTo });
      return {
        status: 302,
        headers: [
          ['location', url.href],
          ...setCookie.map((cookie): [string, string] => ['set-cookie', cookie]),
          ['cache-control', 'no-store'],
        ],
      };
    } catch (error) {
      return this.fail(error, native, []);
    }
  }

  /** GET callback: finish the login, set the session, return the browser. */
  async callback(request: LoginRequest, native: Native): Promise<LoginResponse> {
    try {
      const result = await this.login.finish(request);
      let location = result.returnTo;
      if (this.options.onLogin) {
        const chosen = await this.options.onLogin(result, native);
        if (typeof chosen === 'string') {
          const safe = safeReturnPath(chosen);
          if (safe === undefined)
            throw loginError('return_path_invalid', 'onLogin returned a path that is not same-origin');
          location = safe;
        }
      }
      const headers: Array<[string, string]> = [
        ['set-cookie', result.setCookie],
        ...(await this.cleanupCookies(request)),
      ];
      if (this.login.sessions) headers.push(['set-cookie', await this.login.sessionCookie(request, result.userId)]);
      headers.push(['location', location], ['cache-control', 'no-store']);
      return { status: 303, headers };
    } catch (error) {
      // A failed callback uses its transaction up as well: a retry must start again. The cookie cleared is the one of
      // the callback's state, so a forged callback (another state) leaves the browser's pending logins alone.
      return this.fail(error, native, [...this.clearedTransaction(request), ...(await this.cleanupCookies(request))]);
    }
  }

  /**
   * POST logout: clear the session, return to `?returnTo=` (same origin) or `/`. A POST another site made the browser
   * send (`Sec-Fetch-Site: cross-site`, or without that header an `Origin` other than this site's) is refused with
   * 403 `cross_site_request`: otherwise any page could sign the user out.
   */
  async logout(request: LoginRequest, native?: Native): Promise<LoginResponse> {
    try {
      this.refuseCrossSite(request);
      // Inside the try: naming the cookie reads the request's Host (a path redirectUri), which may be no host name.
      const clear = this.login.clearSessionCookie(request);
      const returnTo =
        safeReturnPath(new URL(request.url, 'http://request.invalid').searchParams.get('returnTo')) ?? '/';
      return {
        status: 303,
        headers: [
          ['set-cookie', clear],
          ['location', returnTo],
          ['cache-control', 'no-store'],
        ],
      };
    } catch (error) {
      return this.fail(error, native as Native, []);
    }
  }

  /**
   * The answer when writing another answer failed (a framework refused one of its headers): 500 `internal_error`,
   * reported to onError like every failure. The mounts use it so a request never hangs and the process never sees
   * an unhandled rejection.
   */
  failure(error: unknown, native: Native): LoginResponse {
    return this.fail(
      new KybLoginError('internal_error', undefined, { detail: 'the answer could not be written', cause: error }),
      native,
      [],
    );
  }

  /**
   * The user of an API request: a verified bearer access token, or (with `session: true`) the session cookie.
   * Resolves with the user, or with the 401/503 answer to send.
   */
  async user(
    request: LoginRequest,
    native: Native,
    guard: RequireUserOptions = {},
  ): Promise<AuthenticatedUser | LoginResponse> {
    const authorization = request.header('authorization')?.trim() ?? '';
    try {
      // Another scheme (HTTP Basic in front of a staging site, say) is not ours to judge: as if there were no bearer
      // token, so the session still counts. Only Bearer credentials that are not a token are refused.
      if (/^Bearer(?:\s|$)/i.test(authorization)) {
        const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization);
        if (!match) throw loginError('token_invalid', 'the Bearer credentials are not a token');
        const { userId, claims } = await this.login.verifyAccessToken(match[1]!);
        return { userId, via: 'bearer', claims };
      }
      if (guard.session) {
        const userId = await this.login.sessionUser(request);
        if (userId !== undefined) return { userId, via: 'session' };
      } else if (await this.hasSession(request)) throw bearerOnly();
      throw loginError('token_missing', 'no bearer token');
    } catch (error) {
      const failure = toLoginError(error);
      // A page seen without a sign-in: no failure to report, the user is sent to sign in and brought back.
      if (failure.code === 'token_missing' && guard.redirectToLogin !== undefined)
        return loginRedirect(request, guard.redirectToLogin);
      const headers: Array<[string, string]> = [];
      if (failure.status === 401) {
        // RFC 6750: say why, without details.
        headers.push([
          'www-authenticate',
          failure.code === 'token_missing' ? 'Bearer' : 'Bearer error="invalid_token"',
        ]);
      }
      return this.fail(failure, native, headers);
    }
  }

  /**
   * Whether a request a bearer-only route refuses carries a valid session cookie (the mistake of guarding a page
   * without `session: true`). Never an error of its own: the refusal stays the route's 401.
   */
  private async hasSession(request: LoginRequest): Promise<boolean> {
    if (!request.header('cookie')) return false;
    return (await this.login.sessionUser(request).catch(() => undefined)) !== undefined;
  }

  /**
   * Fetch Metadata first: every current browser sends Sec-Fetch-Site, and only `cross-site` is refused. `same-site`
   * (a sibling subdomain) passes: it is the boundary the SameSite=Lax session cookie already draws (such a page gets
   * the cookie sent anyway), and a sign-out button on www.shop.example posting to app.shop.example must keep working.
   * Without the header (an older browser), an Origin that is not this site's (the redirect URI's origin) is refused;
   * `Origin: null` (a sandboxed frame, a privacy-redirected form) too. No Origin at all is not a browser's cross-site
   * request: curl, a server, a test.
   */
  private refuseCrossSite(request: LoginRequest): void {
    const site = request.header('sec-fetch-site')?.trim().toLowerCase();
    if (site !== undefined && site !== '') {
      if (site === 'cross-site')
        throw loginError('cross_site_request', 'a POST to logout from another site (Sec-Fetch-Site: cross-site)');
      return;
    }
    const origin = request.header('origin')?.trim();
    if (origin === undefined || origin === '') return;
    if (origin !== new URL(this.login.redirectUriFor(request)).origin) {
      throw loginError(
        'cross_site_request',
        'a POST to logout whose Origin is not this site\u2019s (no Sec-Fetch-Site)',
      );
    }
  }

  /**
   * The cookie that clears a failed callback's transaction, or none when it cannot be named (the request's Host,
   * which a path redirectUri is resolved against, is no host name): the refusal itself must still be answered.
   */
  private clearedTransaction(request: LoginRequest): Array<[string, string]> {
    try {
      return [['set-cookie', this.login.clearTransactionCookie(request)]];
    } catch {
      return [];
    }
  }

  private async cleanupCookies(request: LoginRequest): Promise<Array<[string, string]>> {
    try {
      return (await this.login.callbackCleanupCookies(request)).map((cookie) => ['set-cookie', cookie]);
    } catch {
      return []; // tidying up never changes the answer
    }
  }

  private fail(error: unknown, native: Native, headers: Array<[string, string]>): LoginResponse {
    const failure = toLoginError(error);
    try {
      if (this.options.onError) this.options.onError(failure, native);
      else logServerFailure(failure);
    } catch {
      // a logging hook never changes the answer
    }
    return {
      status: failure.status,
      headers: [...headers, ['content-type', 'application/json; charset=utf-8'], ['cache-control', 'no-store']],
      // A 5xx is the site's own problem: its specific message (a configuration fix) goes to the log, not the browser.
      body: JSON.stringify({ error: failure.code, message: publicMessage(failure) }),
    };
  }
}

/** What the browser is told: for a 4xx the error's message (it says what to do), for a 5xx the code's generic one. */
function publicMessage(failure: KybLoginError): string {
  return failure.status >= 500 ? LOGIN_ERRORS[failure.code].message : failure.message;
}

/**
 * Whether a guard answered with a user (rather than a refusal).
 *
 * @example
 * ```ts
 * const user = await routes.user(request, req)
 * if (!isAuthenticatedUser(user)) return write(res, user)
 * ```
 */
export function isAuthenticatedUser(value: AuthenticatedUser | LoginResponse): value is AuthenticatedUser {
  return typeof (value as AuthenticatedUser).userId === 'string';
}

/**
 * The default onError: without it a misconfiguration (a wrong client secret answers every sign-in 500) left no trace
 * on the server. 4xx are the browser's own mistakes or attacks and would only be noise. Code, message and detail
 * never hold a secret; a cause might (it is the app's own error), so only its name is printed.
 */
function logServerFailure(error: KybLoginError): void {
  if (error.status < 500) return;
  let line = `kyb-login error ${error.status} ${error.code}: ${error.message}`;
  if (error.detail) line += ` \u2014 ${error.detail}`;
  if (error.cause instanceof Error) line += ` (cause: ${error.cause.name}, on error.cause in onError)`;
  console.error(line.replace(/[\r\n]+/g, ' '));
}

/**
 * The 401 of a bearer-only route to a request with a valid session, which says why: the session cookie counts only
 * on routes that accept it (pages), so that other sites cannot use it in requests to the API.
 */
function bearerOnly(): KybLoginError {
  return new KybLoginError(
    'token_missing',
    'This route accepts a bearer access token only. The request carries a valid session cookie, which counts only ' +
      'where the guard accepts sessions: for a page, use requireUser(login, { session: true }).',
    { detail: 'a valid session on a bearer-only route (requireUser without { session: true })' },
  );
}

/** 303 to the login start route, with the requested path to come back to (when it is a safe one). */
function loginRedirect(request: LoginRequest, startPath: string): LoginResponse {
  const target = new URL(startPath, 'http://request.invalid');
  const back = safeReturnPath(request.url);
  if (back !== undefined) target.searchParams.set('returnTo', back);
  return {
    status: 303,
    headers: [
      ['location', target.pathname + target.search],
      ['cache-control', 'no-store'],
    ],
  };
}

function toLoginError(error: unknown): KybLoginError {
  if (error instanceof KybLoginError) return error;
  // Unknown failures (a bug, a hook that threw) get a generic answer; nothing of them reaches the browser.
  return new KybLoginError('internal_error', undefined, { detail: 'unexpected error', cause: error });
}
