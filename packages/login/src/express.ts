import type { NextFunction, Request, RequestHandler, Response } from 'express';
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

declare global {
  // Express's own extension point: its Request type extends Express.Request.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The user {@link requireUser} accepted. */
      kybUser?: AuthenticatedUser;
    }
  }
}

/**
 * The three login routes for Express.
 *
 * @example
 * ```ts
 * const { start, callback, logout } = loginHandlers(login)
 * ```
 */
export interface ExpressLoginHandlers {
  /** GET: redirects to the login server; `?returnTo=/path` says where to come back. */
  start: RequestHandler;
  /** GET, at the path of the redirect URI: finishes the sign-in, sets the session cookie, redirects back. */
  callback: RequestHandler;
  /** POST: clears the session cookie and redirects to `?returnTo=` or `/`. */
  logout: RequestHandler;
}

/**
 * Login routes for Express over a {@link Login}: a thin map of the request and response, as every framework gets.
 *
 * @example
 * ```ts
 * import { createLogin } from '@kyb-webhooks/login'
 * import { loginHandlers, requireUser } from '@kyb-webhooks/login/express'
 *
 * const login = await createLogin({ authUrl, clientId, clientSecret, redirectUri: 'https://shop.example/auth/callback', audience, secret })
 * const auth = loginHandlers(login, { onLogin: async ({ userId, isNewUser }) => { if (isNewUser) await welcome(userId) } })
 * app.get('/auth/login', auth.start)
 * app.get('/auth/callback', auth.callback)
 * app.post('/auth/logout', auth.logout)
 * app.get('/api/me', requireUser(login), (req, res) => res.json({ userId: req.kybUser!.userId }))
 * ```
 */
export function loginHandlers(login: Login, options: LoginRoutesOptions<Request> = {}): ExpressLoginHandlers {
  checkLoginHandlersArguments('express', login, options);
  const routes = new LoginRoutes<Request>(login, options);
  const handler =
    (route: (request: LoginRequest, req: Request) => Promise<LoginResponse>): RequestHandler =>
    (req, res, next) => {
      // catch, not then's second argument: a throw while writing must reach Express, not become an unhandled rejection.
      route(toLoginRequest(req), req)
        .then((answer) => send(res, answer, routes, req))
        .catch(next);
    };
  return {
    start: handler((request, req) => routes.start(request, req)),
    callback: handler((request, req) => routes.callback(request, req)),
    logout: handler((request, req) => routes.logout(request, req)),
  };
}

/**
 * Express middleware that lets a request through only with a verified bearer access token for the configured
 * audience (or, with `session: true`, the login routes' session cookie); the user is `req.kybUser`. Otherwise it
 * answers 401 (503 when the login JWKS cannot be fetched) with `{ error, message }`.
 *
 * @example
 * ```ts
 * app.get('/api/orders', requireUser(login), (req, res) => res.json(ordersOf(req.kybUser!.userId)))
 * app.get('/account', requireUser(login, { session: true }), (req, res) => res.send(`Signed in as ${req.kybUser!.userId}`))
 * ```
 */
export function requireUser(
  login: Login,
  options: RequireUserOptions & Pick<LoginRoutesOptions<Request>, 'onError'> = {},
): RequestHandler {
  checkRequireUserArguments('express', login, options);
  const routes = new LoginRoutes<Request>(login, { ...(options.onError ? { onError: options.onError } : {}) });
  return (req: Request, res: Response, next: NextFunction) => {
    routes
      .user(toLoginRequest(req), req, options)
      .then((user) => {
        if (!isAuthenticatedUser(user)) return send(res, user, routes, req);
        req.kybUser = user;
        next();
      })
      .catch(next);
  };
}

function toLoginRequest(req: Request): LoginRequest {
  return {
    url: req.originalUrl,
    header: (name) => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    encrypted: Boolean((req.socket as { encrypted?: boolean }).encrypted),
  };
}

/**
 * Writes the answer; when Node refuses one of its headers (ERR_INVALID_CHAR), answers 500 internal_error instead, so
 * the browser gets the same answer as on every other mount, and the headers already set are taken back.
 */
function send(res: Response, answer: LoginResponse, routes: LoginRoutes<Request>, req: Request): void {
  try {
    write(res, answer);
  } catch (error) {
    if (res.headersSent) throw error;
    for (const [name] of answer.headers) res.removeHeader(name);
    write(res, routes.failure(error, req));
  }
}

function write(res: Response, answer: LoginResponse): void {
  res.statusCode = answer.status;
  const cookies = answer.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value);
  if (cookies.length > 0) res.append('set-cookie', cookies);
  for (const [name, value] of answer.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  res.end(answer.body);
}
