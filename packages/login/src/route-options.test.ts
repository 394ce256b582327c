import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressLogin from './express.js';
import * as fastifyLogin from './fastify.js';
import * as honoLogin from './hono.js';
import * as koaLogin from './koa.js';
import type { Login } from './login.js';
import { LoginRoutes } from './routes.js';
import { loginOptions, startProviderAndLogin, configError } from './testing/flow.js';
import type { TestProvider } from './testing/provider.js';

// The route helpers take their options when the app starts: a misspelt one must stop it there, as createLogin's do,
// rather than be ignored (a guard without `session` answers 401 to every signed-in page).

type Helper = (login: unknown, options?: unknown) => unknown;
const mounts: Array<[string, { loginHandlers: Helper; requireUser: Helper }]> = [
  ['express', expressLogin as never],
  ['fastify', fastifyLogin as never],
  ['koa', koaLogin as never],
  ['hono', honoLogin as never],
];

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

describe.each(mounts)('the %s route helpers check their arguments', (mount, helpers) => {
  it('requireUser refuses a misspelt option, naming the one meant', () => {
    const error = configError(() => helpers.requireUser(login, { sesion: true }));
    expect(error.message).toContain(`Invalid requireUser (@kyb-webhooks/login/${mount}) arguments`);
    expect(error.message).toContain('`sesion` is not an option of requireUser: did you mean `session`?');
  });

  it('loginHandlers refuses a misspelt option, naming the one meant', () => {
    const error = configError(() => helpers.loginHandlers(login, { onlogin: () => undefined }));
    expect(error.message).toContain(`Invalid loginHandlers (@kyb-webhooks/login/${mount}) arguments`);
    expect(error.message).toContain('`onlogin` is not an option of loginHandlers: did you mean `onLogin`?');
  });

  it('both refuse an option of the wrong kind, and a login that is not a Login', () => {
    expect(configError(() => helpers.requireUser(login, { session: 'yes' })).message).toContain(
      '`session` must be true or false, got a string.',
    );
    expect(configError(() => helpers.loginHandlers(login, { onError: 'console' })).message).toContain(
      '`onError` must be a function, got a string.',
    );
    expect(configError(() => helpers.loginHandlers(Promise.resolve(login))).message).toContain(
      '`login` is a Promise (missing await?)',
    );
    expect(configError(() => helpers.requireUser(loginOptions(provider))).message).toContain(
      "`login` is createLogin's options, not a Login",
    );
    expect(configError(() => helpers.requireUser(undefined)).message).toContain('`login` is missing');
  });

  it('requireUser refuses redirectToLogin without session: true (the user would come back to the same refusal), or not a path', () => {
    expect(configError(() => helpers.requireUser(login, { redirectToLogin: '/auth/login' })).message).toContain(
      '`redirectToLogin` needs `session: true`',
    );
    expect(
      configError(() => helpers.requireUser(login, { session: true, redirectToLogin: 'https://evil.example/' }))
        .message,
    ).toContain("`redirectToLogin` must be a path on this site such as '/auth/login', got a string.");
    expect(configError(() => helpers.requireUser(login, { session: true, redirect: '/auth/login' })).message).toContain(
      'did you mean `redirectToLogin`?',
    );
  });

  it('both accept every documented option (control)', () => {
    expect(() =>
      helpers.requireUser(login, { session: true, redirectToLogin: '/auth/login', onError: () => undefined }),
    ).not.toThrow();
    expect(() => helpers.requireUser(login, { session: true, onError: () => undefined })).not.toThrow();
    expect(() => helpers.requireUser(login)).not.toThrow();
    expect(() => helpers.loginHandlers(login, { onLogin: () => undefined, onError: () => undefined })).not.toThrow();
    expect(() => helpers.loginHandlers(login)).not.toThrow();
  });
});

describe('new LoginRoutes checks its arguments as loginHandlers does', () => {
  it('refuses a misspelt option', () => {
    const error = configError(() => new LoginRoutes(login, { onerror: () => undefined } as never));
    expect(error.message).toContain('`onerror` is not an option of new LoginRoutes: did you mean `onError`?');
  });

  it('never repeats a value in the message (an option may hold a secret)', () => {
    const error = configError(
      () => new LoginRoutes(login, { clientSecret: 'client-secret-value', onLogin: 'onlogin-value' } as never),
    );
    expect(error.message).not.toContain('client-secret-value');
    expect(error.message).not.toContain('onlogin-value');
    expect(error.message).toContain(
      '`clientSecret` is not an option of new LoginRoutes; its options are onLogin, onError.',
    );
  });
});

describe('Koa loginRoutes (the three routes in one middleware) checks its arguments', () => {
  it('refuses a path that is not one, an unknown route and a misspelt option; accepts the documented ones', () => {
    expect(configError(() => koaLogin.loginRoutes(login, { paths: { start: 'auth/login' } })).message).toContain(
      "`paths` `start` must be a path such as '/auth/login'",
    );
    expect(configError(() => koaLogin.loginRoutes(login, { paths: { signin: '/in' } as never })).message).toContain(
      '`paths` has no route `signin`; its routes are start, callback, logout.',
    );
    expect(configError(() => koaLogin.loginRoutes(login, { path: {} } as never)).message).toContain(
      'did you mean `paths`?',
    );
    expect(() =>
      koaLogin.loginRoutes(login, {
        paths: { start: '/in', callback: '/back', logout: '/out' },
        onLogin: () => undefined,
      }),
    ).not.toThrow();
  });
});
