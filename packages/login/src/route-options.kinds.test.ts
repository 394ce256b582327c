import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressLogin from './express.js';
import * as koaLogin from './koa.js';
import type { Login } from './login.js';
import { LoginRoutes } from './routes.js';
import { startProviderAndLogin, configError } from './testing/flow.js';
import type { TestProvider } from './testing/provider.js';

// The route helpers' refusals name the argument, its kind (never its value) and the fix, for every kind of mistake.

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

const requireUser = (l: unknown, options?: unknown): unknown => expressLogin.requireUser(l as Login, options as never);
const FIX = 'pass the login that `await createLogin(options)` resolves to.';

describe('the route helpers say what the login argument is instead of a Login', () => {
  it.each<[string, unknown, string]>([
    ['null', null, `\`login\` is missing: ${FIX}`],
    ['a string', 'login', `\`login\` must be a Login, got a string: ${FIX}`],
    ['a function', () => login, `\`login\` must be a Login, got a function: ${FIX}`],
    [
      'createLogin options with clientId only',
      { clientId: 'merchant' },
      `\`login\` is createLogin's options, not a Login: ${FIX}`,
    ],
    [
      'createLogin options with authUrl only',
      { authUrl: 'https://login.example' },
      `\`login\` is createLogin's options, not a Login: ${FIX}`,
    ],
    [
      'an empty object',
      {},
      `\`login\` is not a Login (it has no start, finish, clearTransactionCookie, verifyAccessToken, sessionCookie, clearSessionCookie, sessionUser): ${FIX}`,
    ],
    [
      'an object with some of its methods',
      { start() {}, finish() {}, clearTransactionCookie() {}, verifyAccessToken() {}, sessionCookie() {} },
      `\`login\` is not a Login (it has no clearSessionCookie, sessionUser): ${FIX}`,
    ],
  ])('%s', (_name, value, line) => {
    const error = configError(() => requireUser(value));
    expect(error.message).toBe(
      `Invalid requireUser (@kyb-webhooks/login/express) arguments:\n- ${line}\nExample: requireUser(login, { session: true, redirectToLogin: '/auth/login' })`,
    );
  });
});

describe('the route helpers check what options is and each option', () => {
  it.each<[string, unknown, string]>([
    ['a string', 'session', 'a string'],
    ['null', null, 'null'],
    ['an array', ['session'], 'an array'],
    ['true', true, 'a boolean'],
  ])('refuses %s as options', (_name, options, kind) => {
    expect(configError(() => new LoginRoutes(login, options as never)).message).toContain(
      `\n- \`options\` must be an object, got ${kind}.\n`,
    );
  });

  it('names the kind of a wrong option value: undefined is no value, null, an array, a number, an object', () => {
    expect(() => requireUser(login, { session: undefined, onError: undefined })).not.toThrow();
    expect(() => new LoginRoutes(login, undefined)).not.toThrow();
    expect(configError(() => requireUser(login, { session: null })).message).toContain(
      '`session` must be true or false, got null.',
    );
    expect(configError(() => requireUser(login, { session: [true] })).message).toContain(
      '`session` must be true or false, got an array.',
    );
    expect(configError(() => requireUser(login, { session: 1 })).message).toContain(
      '`session` must be true or false, got a number.',
    );
    expect(configError(() => requireUser(login, { onError: {} })).message).toContain(
      '`onError` must be a function, got an object.',
    );
    expect(configError(() => requireUser(login, { session: true, redirectToLogin: 42 })).message).toContain(
      "`redirectToLogin` must be a path on this site such as '/auth/login', got a number.",
    );
  });

  it('lists every problem on a line of its own', () => {
    expect(configError(() => requireUser(undefined, { session: 'yes', onError: 'log' })).message).toBe(
      'Invalid requireUser (@kyb-webhooks/login/express) arguments:\n' +
        `- \`login\` is missing: ${FIX}\n` +
        '- `session` must be true or false, got a string.\n' +
        '- `onError` must be a function, got a string.\n' +
        "Example: requireUser(login, { session: true, redirectToLogin: '/auth/login' })",
    );
  });
});

describe('the route helpers guess the option meant', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['an alias', { onSuccess: () => undefined }, 'did you mean `onLogin`?'],
    ['the name with an underscore', { on_login: () => undefined }, 'did you mean `onLogin`?'],
    ['the name in capitals', { ONERROR: () => undefined }, 'did you mean `onError`?'],
  ])('loginHandlers: %s', (_name, options, guess) => {
    const name = Object.keys(options)[0];
    expect(configError(() => new LoginRoutes(login, options as never)).message).toContain(
      `\n- \`${name}\` is not an option of new LoginRoutes: ${guess}\n`,
    );
  });

  it('from three letters or more, never fewer', () => {
    expect(configError(() => requireUser(login, { ses: true })).message).toContain(
      '`ses` is not an option of requireUser: did you mean `session`?',
    );
    expect(configError(() => requireUser(login, { se: true })).message).toContain(
      '`se` is not an option of requireUser; its options are session, redirectToLogin, onError.',
    );
  });
});

describe('Koa loginRoutes checks paths', () => {
  it.each<[string, unknown, string]>([
    ['a string', '/auth', 'must be an object, got a string.'],
    ['null', null, 'must be an object, got null.'],
    ['an array', ['/auth/login'], 'must be an object, got an array.'],
    ['a number', 1, 'must be an object, got a number.'],
  ])('refuses %s as paths', (_name, paths, words) => {
    expect(configError(() => koaLogin.loginRoutes(login, { paths } as never)).message).toContain(
      `\n- \`paths\` ${words}\n`,
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a start path with a query',
      { start: '/auth/login?next=/' },
      "`start` must be a path such as '/auth/login', without query, got a string.",
    ],
    [
      'a callback URL on another site',
      { callback: 'https://evil.example/cb' },
      "`callback` must be a path such as '/auth/callback', without query, got a string.",
    ],
    [
      'a protocol-relative logout path',
      { logout: '//evil.example/out' },
      "`logout` must be a path such as '/auth/logout', without query, got a string.",
    ],
    [
      'a callback path with a fragment',
      { callback: '/auth/callback#x' },
      "`callback` must be a path such as '/auth/callback', without query, got a string.",
    ],
    [
      'a number as logout',
      { logout: 7 },
      "`logout` must be a path such as '/auth/logout', without query, got a number.",
    ],
  ])('refuses %s', (_name, paths, words) => {
    expect(configError(() => koaLogin.loginRoutes(login, { paths } as never)).message).toContain(
      `\n- \`paths\` ${words}\n`,
    );
  });

  it('names itself and its mount, with its example', () => {
    expect(configError(() => koaLogin.loginRoutes(login, { paths: null } as never)).message).toBe(
      'Invalid loginRoutes (@kyb-webhooks/login/koa) arguments:\n- `paths` must be an object, got null.\n' +
        "Example: loginRoutes(login, { paths: { start: '/auth/login', logout: '/auth/logout' }, onLogin, onError })",
    );
  });

  it('accepts a route left undefined', () => {
    expect(() => koaLogin.loginRoutes(login, { paths: { start: undefined, logout: '/out' } })).not.toThrow();
  });
});
