import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Login, LoginRequest } from './login.js';
import { checkLoginHandlersArguments, checkRequireUserArguments } from './route-options.js';
import { isAuthenticatedUser, LoginRoutes, type AuthenticatedUser, type LoginResponse, type LoginRoutesOptions, type RequireUserOptions } from './routes.js';

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
      route(toLoginRequest(req), req).then((answer) => write(res, answer), next);
    };
  return {
    start: handler((request, req) => routes.start(request, req)),
    callback: handler((request, req) => routes.callback(request, req)),
    logout: handler((request) => routes.logout(request)),
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
export function requireUser(login: Login, options: RequireUserOptions & Pick<LoginRoutesOptions<Request>, 'onError'> = {}): RequestHandler {
  checkRequireUserArguments('express', login, options);
  const routes = new LoginRoutes<Request>(login, { ...(options.onError ? { onError: options.onError } : {}) });
  return (req: Request, res: Response, next: NextFunction) => {
    routes.user(toLoginRequest(req), req, options).then((user) => {
      if (!isAuthenticatedUser(user)) return write(res, user);
      req.kybUser = user;
      next();
    }, next);
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

function write(res: Response, answer: LoginResponse): void {
  res.statusCode = answer.status;
  const cookies = answer.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value);
  if (cookies.length > 0) res.append('set-cookie', cookies);
  for (const [name, value] of answer.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  res.end(answer.body);
}
