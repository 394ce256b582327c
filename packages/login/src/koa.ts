import type { Context, Middleware, Next } from 'koa';
import type { Login, LoginRequest } from './login.js';
import { checkLoginHandlersArguments, checkLoginRouterArguments, checkRequireUserArguments } from './route-options.js';
import {
  isAuthenticatedUser,
  LoginRoutes,
  type LoginResponse,
  type LoginRoutesOptions,
  type RequireUserOptions,
} from './routes.js';

/**
 * The three login routes for Koa.
 *
 * @example
 * ```ts
 * const { start, callback, logout } = loginHandlers(login)
 * ```
 */
export interface KoaLoginHandlers {
  /** GET: redirects to the login server; `?returnTo=/path` says where to come back. */
  start: Middleware;
  /** GET, at the path of the redirect URI: finishes the sign-in, sets the session cookie, redirects back. */
  callback: Middleware;
  /** POST: clears the session cookie and redirects to `?returnTo=` or `/`. */
  logout: Middleware;
}

/**
 * The paths {@link loginRoutes} answers; each defaults as shown.
 *
 * @example
 * ```ts
 * const paths: KoaLoginPaths = { start: '/auth/login', callback: '/auth/callback', logout: '/auth/logout' }
 * ```
 */
export interface KoaLoginPaths {
  /** GET: default `/auth/login`. */
  start?: string;
  /** GET: default the path of the login's redirect URI (`login.callbackPath`), which it must be. */
  callback?: string;
  /** POST: default `/auth/logout`. */
  logout?: string;
}

/**
 * The three login routes mounted on a Koa app in one middleware, as Express, Fastify and Hono mount them with their
 * routers (Koa has none built in): GET start, GET callback at the redirect URI's path, POST logout; every other
 * request goes on to `next`. With `@koa/router`, {@link loginHandlers} gives the three handlers to mount yourself.
 *
 * @example
 * ```ts
 * import { loginRoutes, requireUser } from '@kyb-webhooks/login/koa'
 *
 * app.use(loginRoutes(login, { onLogin: async ({ userId, isNewUser }) => { if (isNewUser) await welcome(userId) } }))
 * ```
 */
export function loginRoutes(
  login: Login,
  options: LoginRoutesOptions<Context> & { paths?: KoaLoginPaths } = {},
): Middleware {
  checkLoginRouterArguments('koa', login, options);
  const { paths = {}, ...hooks } = options;
  const auth = loginHandlers(login, hooks);
  const routes = new Map<string, Middleware>([
    [`GET ${paths.start ?? '/auth/login'}`, auth.start],
    [`GET ${paths.callback ?? login.callbackPath}`, auth.callback],
    [`POST ${paths.logout ?? '/auth/logout'}`, auth.logout],
  ]);
  return (ctx, next) => {
    const route = routes.get(`${ctx.method} ${ctx.path}`);
    return route ? route(ctx, next) : next();
  };
}

/**
 * Login routes for Koa over a {@link Login}: a thin map of the context, as every framework gets. For a router such as
 * `@koa/router`; without one, {@link loginRoutes} mounts all three.
 *
 * @example
 * ```ts
 * import Router from '@koa/router'
 * import { loginHandlers, requireUser } from '@kyb-webhooks/login/koa'
 *
 * const auth = loginHandlers(login)
 * router.get('/auth/login', auth.start).get('/auth/callback', auth.callback).post('/auth/logout', auth.logout)
 * router.get('/api/me', requireUser(login), (ctx) => { ctx.body = { userId: ctx.state.kybUser.userId } })
 * ```
 */
export function loginHandlers(login: Login, options: LoginRoutesOptions<Context> = {}): KoaLoginHandlers {
  checkLoginHandlersArguments('koa', login, options);
  const routes = new LoginRoutes<Context>(login, options);
  return {
    start: async (ctx) => send(ctx, await routes.start(toLoginRequest(ctx), ctx), routes),
    callback: async (ctx) => send(ctx, await routes.callback(toLoginRequest(ctx), ctx), routes),
    logout: async (ctx) => send(ctx, await routes.logout(toLoginRequest(ctx), ctx), routes),
  };
}

/**
 * Koa middleware that lets a request through only with a verified bearer access token for the configured audience
 * (or, with `session: true`, the login routes' session cookie); the user is `ctx.state.kybUser`. Otherwise it
 * answers 401 (503 when the login JWKS cannot be fetched) with `{ error, message }`.
 *
 * @example
 * ```ts
 * router.get('/api/orders', requireUser(login), (ctx) => { ctx.body = ordersOf(ctx.state.kybUser.userId) })
 * ```
 */
export function requireUser(
  login: Login,
  options: RequireUserOptions & Pick<LoginRoutesOptions<Context>, 'onError'> = {},
): Middleware {
  checkRequireUserArguments('koa', login, options);
  const routes = new LoginRoutes<Context>(login, { ...(options.onError ? { onError: options.onError } : {}) });
  return async (ctx: Context, next: Next) => {
    const user = await routes.user(toLoginRequest(ctx), ctx, options);
    if (!isAuthenticatedUser(user)) return send(ctx, user, routes);
    ctx.state.kybUser = user;
    await next();
  };
}

function toLoginRequest(ctx: Context): LoginRequest {
  return {
    url: ctx.originalUrl,
    // ctx.get answers '' for a missing header; the core needs to tell missing from empty.
    header: (name) => {
      const value = ctx.req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    encrypted: Boolean((ctx.req.socket as { encrypted?: boolean }).encrypted),
  };
}

/**
 * Writes the answer; when Node refuses one of its headers (ERR_INVALID_CHAR), answers 500 internal_error instead
 * (Koa's own answer would be a text 500), with the headers already set taken back.
 */
function send(ctx: Context, answer: LoginResponse, routes: LoginRoutes<Context>): void {
  try {
    write(ctx, answer);
  } catch (error) {
    for (const [name] of answer.headers) ctx.remove(name);
    write(ctx, routes.failure(error, ctx));
  }
}

function write(ctx: Context, answer: LoginResponse): void {
  for (const [name, value] of answer.headers) {
    if (name === 'set-cookie') ctx.append('set-cookie', value);
    else ctx.set(name, value);
  }
  // An answer without a body (a redirect) is written empty: left unset, Koa would write its status text ("Found").
  // Null first, as Koa turns a null body set after the status into a 204.
  if (answer.body === undefined) ctx.body = null;
  ctx.status = answer.status;
  if (answer.body !== undefined) ctx.body = answer.body;
}
