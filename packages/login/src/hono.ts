import type { Context, Handler, MiddlewareHandler } from 'hono';
import type { Login, LoginRequest } from './login.js';
import { checkLoginHandlersArguments, checkRequireUserArguments } from './route-options.js';
import {
  isAuthenticatedUser,
  LoginRoutes,
  type AuthenticatedUser,
  type LoginResponse,
  type LoginRoutesOptions,
  type RequireUserOptions,
} from './routes.js';

/**
 * The variables {@link requireUser} sets, for `new Hono<{ Variables: KybLoginVariables }>()`.
 *
 * @example
 * ```ts
 * const app = new Hono<{ Variables: KybLoginVariables }>()
 * app.get('/api/me', requireUser(login), (c) => c.json({ userId: c.get('kybUser').userId }))
 * ```
 */
export type KybLoginVariables = { kybUser: AuthenticatedUser };

/**
 * The three login routes for Hono.
 *
 * @example
 * ```ts
 * const { start, callback, logout } = loginHandlers(login)
 * ```
 */
export interface HonoLoginHandlers {
  /** GET: redirects to the login server; `?returnTo=/path` says where to come back. */
  start: Handler;
  /** GET, at the path of the redirect URI: finishes the sign-in, sets the session cookie, redirects back. */
  callback: Handler;
  /** POST: clears the session cookie and redirects to `?returnTo=` or `/`. */
  logout: Handler;
}

/**
 * Login routes for Hono over a {@link Login}: a thin map of the request, as every framework gets. Web-standard only
 * (Node, Bun, Deno, Workers).
 *
 * @example
 * ```ts
 * import { loginHandlers, requireUser } from '@kyb-webhooks/login/hono'
 *
 * const auth = loginHandlers(login)
 * app.get('/auth/login', auth.start)
 * app.get('/auth/callback', auth.callback)
 * app.post('/auth/logout', auth.logout)
 * ```
 */
export function loginHandlers(login: Login, options: LoginRoutesOptions<Context> = {}): HonoLoginHandlers {
  checkLoginHandlersArguments('hono', login, options);
  const routes = new LoginRoutes<Context>(login, options);
  return {
    start: async (c) => send(await routes.start(toLoginRequest(c), c), routes, c),
    callback: async (c) => send(await routes.callback(toLoginRequest(c), c), routes, c),
    logout: async (c) => send(await routes.logout(toLoginRequest(c), c), routes, c),
  };
}

/**
 * Hono middleware that lets a request through only with a verified bearer access token for the configured audience
 * (or, with `session: true`, the login routes' session cookie); the user is `c.get('kybUser')`. Otherwise it answers
 * 401 (503 when the login JWKS cannot be fetched) with `{ error, message }`.
 *
 * @example
 * ```ts
 * app.get('/api/orders', requireUser(login), (c) => c.json(ordersOf(c.get('kybUser').userId)))
 * ```
 */
export function requireUser(
  login: Login,
  options: RequireUserOptions & Pick<LoginRoutesOptions<Context>, 'onError'> = {},
): MiddlewareHandler<{ Variables: KybLoginVariables }> {
  checkRequireUserArguments('hono', login, options);
  const routes = new LoginRoutes<Context>(login, { ...(options.onError ? { onError: options.onError } : {}) });
  return async (c, next) => {
    const user = await routes.user(toLoginRequest(c), c, options);
    if (!isAuthenticatedUser(user)) return send(user, routes, c);
    c.set('kybUser', user);
    await next();
  };
}

function toLoginRequest(c: Context): LoginRequest {
  const url = new URL(c.req.url);
  return { url: url.pathname + url.search, header: (name) => c.req.header(name), encrypted: url.protocol === 'https:' };
}

/**
 * The answer as a Response; when Headers refuses one of its values (a ByteString over U+00FF, a line break), 500
 * internal_error instead, as on every other mount (Hono's own answer would be a text 500).
 */
function send(answer: LoginResponse, routes: LoginRoutes<Context>, c: Context): Response {
  try {
    return toResponse(answer);
  } catch (error) {
    return toResponse(routes.failure(error, c));
  }
}

function toResponse(answer: LoginResponse): Response {
  const headers = new Headers();
  for (const [name, value] of answer.headers) headers.append(name, value);
  return new Response(answer.body ?? null, { status: answer.status, headers });
}
