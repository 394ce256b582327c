import Koa from 'koa';
import { loginHandlers, requireUser } from './koa.js';
import { loginConformanceSuite } from './testing/conformance.js';

loginConformanceSuite('Koa', (server, login, hooks) => {
  const app = new Koa();
  const auth = loginHandlers(login, hooks);
  const bearer = requireUser(login);
  const session = requireUser(login, { session: true });
  const me = async (ctx: Koa.Context): Promise<void> => {
    ctx.body = { userId: ctx.state.kybUser.userId, via: ctx.state.kybUser.via };
  };
  app.use(async (ctx, next) => {
    const route = `${ctx.method} ${ctx.path}`;
    if (route === 'GET /auth/login') return auth.start(ctx, next);
    if (route === 'GET /auth/callback') return auth.callback(ctx, next);
    if (route === 'POST /auth/logout') return auth.logout(ctx, next);
    if (route === 'GET /api/me') return bearer(ctx, () => me(ctx));
    if (route === 'GET /me') return session(ctx, () => me(ctx));
    return next();
  });
  server.on('request', app.callback());
});
