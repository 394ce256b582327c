import { validateHeaderName, validateHeaderValue } from 'node:http';
import type {
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
  RouteHandlerMethod,
  RouteShorthandOptionsWithHandler,
} from 'fastify';
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

declare module 'fastify' {
  interface FastifyRequest {
    /** The user {@link requireUser} accepted. */
    kybUser?: AuthenticatedUser;
  }
}

/**
 * The three login routes for Fastify.
 *
 * @example
 * ```ts
 * const { start, callback, logout } = loginHandlers(login)
 * ```
 */
export interface FastifyLoginHandlers {
  /** GET: redirects to the login server; `?returnTo=/path` says where to come back. */
  start: RouteHandlerMethod;
  /** GET, at the path of the redirect URI: finishes the sign-in, sets the session cookie, redirects back. */
  callback: RouteHandlerMethod;
  /**
   * POST: clears the session cookie and redirects to `?returnTo=` or `/`. Route options rather than a bare handler
   * (`app.post('/auth/logout', auth.logout)` takes either): it answers in an onRequest hook, before Fastify parses the
   * body, so a sign-out button's HTML form (`application/x-www-form-urlencoded`, which Fastify has no parser for and
   * would answer 415) needs no body parser. Logout reads no body.
   */
  logout: RouteShorthandOptionsWithHandler;
}

/**
 * Login routes for Fastify over a {@link Login}: a thin map of request and reply, as every framework gets.
 *
 * @example
 * ```ts
 * import { loginHandlers, requireUser } from '@kyb-webhooks/login/fastify'
 *
 * const auth = loginHandlers(login)
 * app.get('/auth/login', auth.start)
 * app.get('/auth/callback', auth.callback)
 * app.post('/auth/logout', auth.logout)
 * app.get('/api/me', { preHandler: requireUser(login) }, async (request) => ({ userId: request.kybUser!.userId }))
 * ```
 */
export function loginHandlers(login: Login, options: LoginRoutesOptions<FastifyRequest> = {}): FastifyLoginHandlers {
  checkLoginHandlersArguments('fastify', login, options);
  const routes = new LoginRoutes<FastifyRequest>(login, options);
  const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    send(reply, await routes.logout(toLoginRequest(request), request), routes, request);
  return {
    start: async (request, reply) => send(reply, await routes.start(toLoginRequest(request), request), routes, request),
    callback: async (request, reply) =>
      send(reply, await routes.callback(toLoginRequest(request), request), routes, request),
    // The hook answers; the handler is there because Fastify needs one, and is never reached.
    logout: { onRequest: logout, handler: logout },
  };
}

/**
 * A Fastify preHandler that lets a request through only with a verified bearer access token for the configured
 * audience (or, with `session: true`, the login routes' session cookie); the user is `request.kybUser`. Otherwise it
 * answers 401 (503 when the login JWKS cannot be fetched) with `{ error, message }`.
 *
 * @example
 * ```ts
 * app.get('/api/orders', { preHandler: requireUser(login) }, async (request) => ordersOf(request.kybUser!.userId))
 * ```
 */
export function requireUser(
  login: Login,
  options: RequireUserOptions & Pick<LoginRoutesOptions<FastifyRequest>, 'onError'> = {},
): preHandlerAsyncHookHandler {
  checkRequireUserArguments('fastify', login, options);
  const routes = new LoginRoutes<FastifyRequest>(login, { ...(options.onError ? { onError: options.onError } : {}) });
  return async (request, reply) => {
    const user = await routes.user(toLoginRequest(request), request, options);
    if (!isAuthenticatedUser(user)) return send(reply, user, routes, request);
    request.kybUser = user;
  };
}

function toLoginRequest(request: FastifyRequest): LoginRequest {
  return {
    url: request.url,
    header: (name) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    encrypted: Boolean((request.raw.socket as { encrypted?: boolean }).encrypted),
  };
}

/**
 * Writes the answer. Fastify only writes headers after the handler returned, where Node's refusal of a header
 * (ERR_INVALID_CHAR) would become Fastify's own 500; so they are checked here first, and such an answer becomes 500
 * internal_error, as on every other mount.
 */
function send(
  reply: FastifyReply,
  answer: LoginResponse,
  routes: LoginRoutes<FastifyRequest>,
  request: FastifyRequest,
): FastifyReply {
  try {
    for (const [name, value] of answer.headers) {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    }
  } catch (error) {
    return write(reply, routes.failure(error, request));
  }
  return write(reply, answer);
}

function write(reply: FastifyReply, answer: LoginResponse): FastifyReply {
  reply.code(answer.status);
  const cookies = answer.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value);
  if (cookies.length > 0) reply.header('set-cookie', cookies);
  for (const [name, value] of answer.headers) if (name !== 'set-cookie') reply.header(name, value);
  return reply.send(answer.body ?? '');
}
