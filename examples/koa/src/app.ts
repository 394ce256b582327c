import { bodyParser } from '@koa/bodyparser';
import type { Receiver } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/koa';
import Koa from 'koa';

/**
 * The example app. The webhook middleware runs before the body parser, so it reads the exact bytes the signature
 * covers itself; the rest of the app parses JSON as usual.
 */
export function createApp(receiver: Receiver): Koa {
  const app = new Koa();
  app.use(kybWebhooks(receiver, { path: '/webhooks/kyb' }));
  app.use(bodyParser());
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = { ok: true };
    else await next();
  });
  return app;
}
