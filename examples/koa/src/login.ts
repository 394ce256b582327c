import { accountPage, homePage, type ExampleLogin } from '@kyb-webhooks/example-shared';
import { loginHandlers, requireUser } from '@kyb-webhooks/login/koa';
import type Koa from 'koa';

/**
 * "Sign in with the service" on the Koa app: a home page with the sign-in link, the login routes (the callback at
 * the path of KYB_REDIRECT_URI), and an account page that shows the signed-in user's id. The handlers are ordinary
 * Koa middleware, so with @koa/router they are `router.get('/auth/login', auth.start)`.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv()
 * if (login) mountLogin(app, login)
 * ```
 */
export function mountLogin(app: Koa, { login, callbackPath, hooks }: ExampleLogin): void {
  const auth = loginHandlers(login, hooks);
  // The session cookie the callback set; without it, 401 { error: 'token_missing' }.
  const signedIn = requireUser(login, { session: true });
  app.use(async (ctx, next) => {
    const route = `${ctx.method} ${ctx.path}`;
    if (route === 'GET /') {
      ctx.type = 'html';
      ctx.body = homePage();
      return;
    }
    if (route === 'GET /auth/login') return auth.start(ctx, next);
    if (route === `GET ${callbackPath}`) return auth.callback(ctx, next);
    if (route === 'POST /auth/logout') return auth.logout(ctx, next);
    if (route === 'GET /account') {
      return signedIn(ctx, async () => {
        ctx.type = 'html';
        ctx.body = accountPage(ctx.state.kybUser.userId);
      });
    }
    return next();
  });
}
