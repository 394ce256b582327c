import { accountPage, homePage, type ExampleLogin } from '@kyb-webhooks/example-shared';
import { loginHandlers, requireUser } from '@kyb-webhooks/login/express';
import type express from 'express';

/**
 * "Sign in with the service" on the Express app: a home page with the sign-in link, the login routes (the callback
 * at the path of KYB_REDIRECT_URI), and an account page that shows the signed-in user's id.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv()
 * if (login) mountLogin(app, login)
 * ```
 */
export function mountLogin(app: express.Express, { login, callbackPath, hooks }: ExampleLogin): void {
  const auth = loginHandlers(login, hooks);
  app.get('/', (_req, res) => void res.type('html').send(homePage()));
  app.get('/auth/login', auth.start);
  app.get(callbackPath, auth.callback);
  app.post('/auth/logout', auth.logout);
  // The session cookie the callback set; without it, 401 { error: 'token_missing' }.
  app.get(
    '/account',
    requireUser(login, { session: true }),
    (req, res) => void res.type('html').send(accountPage(req.kybUser!.userId)),
  );
}
