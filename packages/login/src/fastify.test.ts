import Fastify from 'fastify';
import { loginHandlers, requireUser } from './fastify.js';
import { loginConformanceSuite } from './testing/conformance.js';

loginConformanceSuite('Fastify', async (server, login, hooks) => {
  // serverFactory: the suite's server already listens (the redirect URI holds its port).
  const app = Fastify({
    serverFactory: (handler) => {
      server.on('request', handler);
      return server;
    },
  });
  const auth = loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get('/api/me', { preHandler: requireUser(login) }, async (request) => ({ userId: request.kybUser!.userId, via: request.kybUser!.via }));
  app.get('/me', { preHandler: requireUser(login, { session: true }) }, async (request) => ({ userId: request.kybUser!.userId, via: request.kybUser!.via }));
  await app.ready();
});
