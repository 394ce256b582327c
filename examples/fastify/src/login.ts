import { accountPage, homePage, type ExampleLogin } from '@kyb-webhooks/example-shared';
import { loginHandlers, requireUser } from '@kyb-webhooks/login/fastify';
import type { FastifyInstance } from 'fastify';

/**
 * "Sign in with the service" on the Fastify app: a home page with the sign-in link, the login routes (the callback
 * at the path of KYB_REDIRECT_URI), and an account page that shows the signed-in user's id.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv()
 * if (login) await mountLogin(app, login)
 * ```
 */
export async function mountLogin(app: FastifyInstance, { login, callbackPath, hooks }: ExampleLogin): Promise<void> {
  const auth = loginHandlers(login, hooks);
  const html = 'text/html; charset=utf-8';
  app.get('/', async (_request, reply) => reply.type(html).send(homePage()));
  app.get('/auth/login', auth.start);
  app.get(callbackPath, auth.callback);
  // The sign-out button is an HTML form: Fastify has no parser for its urlencoded (empty) body and would answer 415,
  // so this route gets one of its own, scoped to it by the plugin's encapsulation.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.post('/auth/logout', auth.logout);
  });
  // The session cookie the callback set; without it, 401 { error: 'token_missing' }.
  app.get('/account', { preHandler: requireUser(login, { session: true }) }, async (request, reply) =>
    reply.type(html).send(accountPage(request.kybUser!.userId)),
  );
}
