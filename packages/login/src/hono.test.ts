import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { loginHandlers, requireUser, type KybLoginVariables } from './hono.js';
import { loginConformanceSuite } from './testing/conformance.js';

loginConformanceSuite('Hono', (server, login, hooks) => {
  const app = new Hono<{ Variables: KybLoginVariables }>();
  const auth = loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get('/api/me', requireUser(login), (c) => c.json({ userId: c.get('kybUser').userId, via: c.get('kybUser').via }));
  app.get('/me', requireUser(login, { session: true }), (c) => c.json({ userId: c.get('kybUser').userId, via: c.get('kybUser').via }));
  server.on('request', getRequestListener(app.fetch));
});
