import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { readRawBody } from '../raw-body.js';
import { header, OK_BODY, UNAUTHORIZED_BODY, type StartApp } from './types.js';

export const start: StartApp = async ({ variant, path, checkHmac, receiver }) => {
  const app = new Koa();
  if (variant === 'adapter' || variant === 'adapter-attested') {
    const { kybWebhooks } = await import('@kyb-webhooks/koa');
    app.use(kybWebhooks(receiver(), { path }));
  } else {
    app.use(async (ctx, next) => {
      if (ctx.path !== path || ctx.method !== 'POST') return next();
      const body = await readRawBody(ctx.req);
      if (variant === 'hmac' && !checkHmac(header(ctx.req.headers['service-kyb-signature']), body)) {
        ctx.status = 401;
        ctx.body = UNAUTHORIZED_BODY;
        return;
      }
      ctx.status = 200;
      ctx.body = OK_BODY;
    });
  }
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};
