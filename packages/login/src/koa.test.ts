import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as koaLogin from './koa.js';
import { type Login } from './login.js';
import { mountKoa } from './testing/apps.js';
import { loginConformanceSuite } from './testing/conformance.js';
import { startProviderAndLogin } from './testing/flow.js';
import { type TestProvider } from './testing/provider.js';

// The shared login cases (testing/conformance.ts) over real HTTP, on the app of testing/apps.ts.
loginConformanceSuite('Koa', mountKoa);

describe('Koa requireUser', () => {
  let provider: TestProvider;
  let login: Login;
  beforeAll(async () => {
    ({ provider, login } = await startProviderAndLogin());
  });
  afterAll(() => provider?.stop());

  it('tells its onError why a request was refused', async () => {
    const errors: string[] = [];
    const app = new Koa();
    const guard = koaLogin.requireUser(login, { onError: (error) => void errors.push(error.code) });
    app.use((ctx) =>
      guard(ctx, async () => {
        ctx.body = 'ok';
      }),
    );
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/api/me`);
      expect(answer.status).toBe(401);
      expect(errors).toEqual(['token_missing']);
    } finally {
      server.close();
    }
  });
});
