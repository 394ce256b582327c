import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import * as fastifyLogin from './fastify.js';
import { type Login } from './login.js';
import { mountFastify } from './testing/apps.js';
import { loginConformanceSuite } from './testing/conformance.js';
import { startProviderAndLogin } from './testing/flow.js';
import { type TestProvider } from './testing/provider.js';

// The shared login cases (testing/conformance.ts) over real HTTP, on the app of testing/apps.ts.
loginConformanceSuite('Fastify', mountFastify);

describe('Fastify requireUser and answers without a body', () => {
  let provider: TestProvider;
  let login: Login;
  beforeAll(async () => {
    ({ provider, login } = await startProviderAndLogin());
  });
  afterAll(() => provider?.stop());

  it('requireUser tells its onError why a request was refused', async () => {
    const errors: string[] = [];
    const app = Fastify();
    app.get(
      '/api/me',
      { preHandler: fastifyLogin.requireUser(login, { onError: (error) => void errors.push(error.code) }) },
      async () => 'ok',
    );
    const answer = await app.inject({ method: 'GET', url: '/api/me' });
    expect(answer.statusCode).toBe(401);
    expect(errors).toEqual(['token_missing']);
    await app.close();
  });

  it('the start redirect has an empty body', async () => {
    const app = Fastify();
    app.get('/auth/login', fastifyLogin.loginHandlers(login).start);
    const answer = await app.inject({ method: 'GET', url: '/auth/login', headers: { host: '127.0.0.1:9' } });
    expect(answer.statusCode).toBe(302);
    expect(answer.body).toBe('');
    await app.close();
  });
});
