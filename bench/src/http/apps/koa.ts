import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { readRawBody } from '../raw-body.js';
import { answerBody, BODY_LIMIT_BYTES, header, type StartApp } from './types.js';

export const start: StartApp = async ({ path, endpoint }) => {
  const app = new Koa();
  if (endpoint.kind === 'adapter') {
    const { kybWebhooks } = await import('@kyb-webhooks/koa');
    app.use(kybWebhooks(endpoint.receiver, { path }));
  } else {
    app.use(async (ctx, next) => {
      if (ctx.path !== path || ctx.method !== 'POST') return next();
      const body = await readRawBody(ctx.req, BODY_LIMIT_BYTES);
      if (body === undefined) {
        ctx.status = 413;
        return;
      }
      const status = endpoint.answer(header(ctx.req.headers[endpoint.header]), body);
      ctx.status = status;
      ctx.body = answerBody(status);
    });
  }
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};
