/**
 * Test helper: the same small app on each framework, as the conformance suite and the browser test mount it:
 *
 *   GET  /auth/login     loginHandlers(...).start
 *   GET  /auth/callback  loginHandlers(...).callback
 *   POST /auth/logout    loginHandlers(...).logout
 *   GET  /api/me         requireUser(login)                     → 200 { userId, via }
 *   GET  /me             requireUser(login, { session: true })  → 200 { userId, via }
 *   GET  /page           requireUser(login, { session: true, redirectToLogin: '/auth/login' })  → 200 { userId, via }
 */
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import * as expressLogin from '../express.js';
import * as fastifyLogin from '../fastify.js';
import * as honoLogin from '../hono.js';
import * as koaLogin from '../koa.js';
import type { MountApp } from './conformance.js';

/** The page guard's options: a page that sends a visitor without a session to sign in. */
const PAGE = { session: true, redirectToLogin: '/auth/login' } as const;

export const mountExpress: MountApp = (server, login, hooks) => {
  const app = express();
  const auth = expressLogin.loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get(
    '/api/me',
    expressLogin.requireUser(login),
    (req, res) => void res.json({ userId: req.kybUser!.userId, via: req.kybUser!.via }),
  );
  app.get(
    '/me',
    expressLogin.requireUser(login, { session: true }),
    (req, res) => void res.json({ userId: req.kybUser!.userId, via: req.kybUser!.via }),
  );
  app.get(
    '/page',
    expressLogin.requireUser(login, PAGE),
    (req, res) => void res.json({ userId: req.kybUser!.userId, via: req.kybUser!.via }),
  );
  server.on('request', app);
};

export const mountFastify: MountApp = async (server, login, hooks) => {
  // serverFactory: the suite's server already listens (the redirect URI holds its port).
  const app = Fastify({
    serverFactory: (handler) => {
      server.on('request', handler);
      return server;
    },
  });
  const auth = fastifyLogin.loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get('/api/me', { preHandler: fastifyLogin.requireUser(login) }, async (request) => ({
    userId: request.kybUser!.userId,
    via: request.kybUser!.via,
  }));
  app.get('/me', { preHandler: fastifyLogin.requireUser(login, { session: true }) }, async (request) => ({
    userId: request.kybUser!.userId,
    via: request.kybUser!.via,
  }));
  app.get('/page', { preHandler: fastifyLogin.requireUser(login, PAGE) }, async (request) => ({
    userId: request.kybUser!.userId,
    via: request.kybUser!.via,
  }));
  await app.ready();
};

export const mountKoa: MountApp = (server, login, hooks) => {
  const app = new Koa();
  const bearer = koaLogin.requireUser(login);
  const session = koaLogin.requireUser(login, { session: true });
  const page = koaLogin.requireUser(login, PAGE);
  const me = async (ctx: Koa.Context): Promise<void> => {
    ctx.body = { userId: ctx.state.kybUser.userId, via: ctx.state.kybUser.via };
  };
  app.use(koaLogin.loginRoutes(login, hooks));
  // The app's own routes (Koa has no router built in; the login routes above are the package's mount).
  app.use(async (ctx, next) => {
    const route = `${ctx.method} ${ctx.path}`;
    if (route === 'GET /api/me') return bearer(ctx, () => me(ctx));
    if (route === 'GET /me') return session(ctx, () => me(ctx));
    if (route === 'GET /page') return page(ctx, () => me(ctx));
    return next();
  });
  server.on('request', app.callback());
};

export const mountHono: MountApp = (server, login, hooks) => {
  const app = new Hono<{ Variables: honoLogin.KybLoginVariables }>();
  const auth = honoLogin.loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get('/api/me', honoLogin.requireUser(login), (c) =>
    c.json({ userId: c.get('kybUser').userId, via: c.get('kybUser').via }),
  );
  app.get('/me', honoLogin.requireUser(login, { session: true }), (c) =>
    c.json({ userId: c.get('kybUser').userId, via: c.get('kybUser').via }),
  );
  app.get('/page', honoLogin.requireUser(login, PAGE), (c) =>
    c.json({ userId: c.get('kybUser').userId, via: c.get('kybUser').via }),
  );
  server.on('request', getRequestListener(app.fetch));
};
