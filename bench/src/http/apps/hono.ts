import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { OK_BODY, UNAUTHORIZED_BODY, type StartApp } from './types.js';

export const start: StartApp = async ({ variant, path, checkHmac, receiver }) => {
  const app = new Hono();
  if (variant === 'adapter' || variant === 'adapter-attested') {
    const { kybWebhooks } = await import('@kyb-webhooks/hono');
    app.post(path, kybWebhooks(receiver()));
  } else {
    app.post(path, async (c) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      if (variant === 'hmac' && !checkHmac(c.req.header('service-kyb-signature'), body)) return c.json(UNAUTHORIZED_BODY, 401);
      return c.json(OK_BODY, 200);
    });
  }
  return new Promise<number>((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
};
