import express from 'express';
import { loginHandlers, requireUser } from './express.js';
import { loginConformanceSuite } from './testing/conformance.js';

loginConformanceSuite('Express', (server, login, hooks) => {
  const app = express();
  const auth = loginHandlers(login, hooks);
  app.get('/auth/login', auth.start);
  app.get('/auth/callback', auth.callback);
  app.post('/auth/logout', auth.logout);
  app.get('/api/me', requireUser(login), (req, res) => void res.json({ userId: req.kybUser!.userId, via: req.kybUser!.via }));
  app.get('/me', requireUser(login, { session: true }), (req, res) => void res.json({ userId: req.kybUser!.userId, via: req.kybUser!.via }));
  server.on('request', app);
});
