import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { answerBody, type StartApp } from './types.js';

export const start: StartApp = async ({ path, endpoint }) => {
  const app = new Hono();
  if (endpoint.kind === 'adapter') {
    const { kybWebhooks } = await import('@kyb-webhooks/hono');
    app.post(path, kybWebhooks(endpoint.receiver));
  } else {
    app.post(path, async (c) => {
      const status = endpoint.answer(c.req.header(endpoint.header), Buffer.from(await c.req.arrayBuffer()));
      return c.json(answerBody(status), status);
    });
  }
  return new Promise<number>((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
};
