import { bodyParser } from '@koa/bodyparser';
import type { Receiver } from '@kyb-webhooks/core';
import type { ExampleLogin } from '@kyb-webhooks/example-shared';
import { kybWebhooks } from '@kyb-webhooks/koa';
import Koa from 'koa';
import { mountLogin } from './login.js';

/**
 * The example app. The webhook middleware runs before the body parser, so it reads the exact bytes the signature
 * covers itself; the rest of the app parses JSON as usual. With `login` (see loginFromEnv), it also has "Sign in
 * with the service" (./login.ts).
 */
export function createApp(receiver: Receiver, login?: ExampleLogin): Koa {
  const app = new Koa();
  app.use(kybWebhooks(receiver, { path: '/webhooks/kyb' }));
  app.use(bodyParser());
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = { ok: true };
    else await next();
  });
  if (login) mountLogin(app, login);
  return app;
}
