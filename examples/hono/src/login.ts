import { accountPage, homePage, type ExampleLogin } from '@kyb-webhooks/example-shared';
import { loginHandlers, requireUser, type KybLoginVariables } from '@kyb-webhooks/login/hono';
import { Hono } from 'hono';

/**
 * "Sign in with the service" for the Hono app, as a sub-app to `app.route('/', …)`: a home page with the sign-in
 * link, the login routes (the callback at the path of KYB_REDIRECT_URI), and an account page that shows the
 * signed-in user's id. Web-standard like the rest of the app.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv()
 * if (login) app.route('/', loginRoutes(login))
 * ```
 */
export function loginRoutes({ login, callbackPath, hooks }: ExampleLogin): Hono<{ Variables: KybLoginVariables }> {
  const app = new Hono<{ Variables: KybLoginVariables }>();
  const auth = loginHandlers(login, hooks);
  app.get('/', (c) => c.html(homePage()));
  app.get('/auth/login', auth.start);
  app.get(callbackPath, auth.callback);
  app.post('/auth/logout', auth.logout);
  // The session cookie the callback set; without it, 401 { error: 'token_missing' }.
  app.get('/account', requireUser(login, { session: true }), (c) => c.html(accountPage(c.get('kybUser').userId)));
  return app;
}
