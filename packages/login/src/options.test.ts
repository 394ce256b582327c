import { describe, expect, it } from 'vitest';
import { KybLoginError } from './errors.js';
import { createLogin } from './login.js';
import { validateLoginOptions, type LoginOptions } from './options.js';
import { configRefusal } from './testing/flow.js';

const valid: LoginOptions = {
  authUrl: 'https://login.service.example',
  clientId: 'merchant',
  clientSecret: 'secret',
  redirectUri: 'https://shop.example/auth/callback',
  audience: 'https://api.shop.example',
  secret: 'x'.repeat(32),
};

/** createLogin's refusal, before any request is made (the URLs above do not resolve). */
const configError = (options: unknown): Promise<KybLoginError> => configRefusal(createLogin(options as LoginOptions));

describe('createLogin refuses options that cannot work, with config_invalid and the fix', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a secret shorter than 32 bytes', { secret: 'x'.repeat(31) }, /secret must be at least 32 bytes/],
    ['no secret', { secret: undefined }, /secret is required/],
    ['an empty list of secrets', { secret: [] }, /secret is an empty list/],
    [
      'a rotation with a short secret',
      { secret: ['y'.repeat(32), 'x'.repeat(31)] },
      /secret\[1\] must be a string of at least 32 bytes/,
    ],
    ['a rotation with a secret that is no string', { secret: ['y'.repeat(32), 42] }, /secret\[1\] must be a string/],
    ['a rotation listing a secret twice', { secret: ['y'.repeat(32), 'y'.repeat(32)] }, /the same secret twice/],
    ['no authUrl', { authUrl: undefined }, /authUrl is required/],
    [
      'the well-known URL as authUrl',
      { authUrl: 'https://login.service.example/.well-known/openid-configuration' },
      /not the discovery document URL/,
    ],
    ['an http authUrl without allowInsecureRequests', { authUrl: 'http://login.service.example' }, /must be https/],
    ['no clientId', { clientId: '' }, /clientId is required/],
    ['no audience', { audience: undefined }, /audience is required/],
    [
      'an empty clientSecret',
      { clientSecret: '' },
      /clientSecret must be a non-empty string, or left out for a public client/,
    ],
    [
      'a relative redirectUri that is not a path',
      { redirectUri: 'auth/callback' },
      /redirectUri must be an absolute URL or a path/,
    ],
    ['idTokenAlgorithm none', { idTokenAlgorithm: 'none' }, /never 'none' or an HMAC algorithm/],
    ['idTokenAlgorithm HS256', { idTokenAlgorithm: 'HS256' }, /idTokenAlgorithm must be one of/],
    ['a leeway over 60 s', { clockToleranceSeconds: 300 }, /clockToleranceSeconds must be a number from 0 to 60/],
    [
      'another library\u2019s option name',
      { issuer: 'https://login.service.example' },
      /unknown option "issuer": did you mean "authUrl"\?/,
    ],
    [
      'a store without take',
      { transactionStore: { set: async () => {} } },
      /transactionStore must have set\(id, transaction, ttlSeconds\) and take\(id\)/,
    ],
    [
      'an endless session (maxAgeSeconds: Infinity)',
      { session: { maxAgeSeconds: Infinity } },
      /session\.maxAgeSeconds must be a number of seconds from 60 to 34560000 \(400 days/,
    ],
    [
      'a session longer than browsers keep a cookie (1e12 s)',
      { session: { maxAgeSeconds: 1e12 } },
      /session\.maxAgeSeconds must be a number of seconds from 60 to 34560000/,
    ],
    [
      'a misspelt session option (maxAge)',
      { session: { maxAge: 3600 } },
      /unknown option "session\.maxAge": did you mean "session\.maxAgeSeconds"\?/,
    ],
    [
      'a misspelt cookies option',
      { cookies: { sesionName: 'sid' } },
      /unknown option "cookies\.sesionName": did you mean "cookies\.sessionName"\?/,
    ],
    [
      'cookies.sameSite, which is fixed',
      { cookies: { sameSite: 'strict' } },
      /cookies\.sameSite is not an option: the login's cookies are always httpOnly, SameSite=Lax/,
    ],
    [
      'cookies.domain, which is fixed',
      { cookies: { domain: '.shop.example' } },
      /cookies\.domain is not an option: .*without Domain/,
    ],
    [
      'cookies.secure: false with an https redirectUri',
      { cookies: { secure: false } },
      /cookies\.secure: false with an https redirectUri .*remove cookies\.secure/,
    ],
    [
      'an http redirectUri on a host that is not loopback',
      { redirectUri: 'http://shop.example/auth/callback' },
      /redirectUri must be https, or http on a loopback host only/,
    ],
    [
      'an http redirectUri in capitals (HTTP://)',
      { redirectUri: 'HTTP://shop.example/auth/callback' },
      /redirectUri must be https, or http on a loopback host only/,
    ],
    [
      'a redirectUri with a leading space',
      { redirectUri: ' https://shop.example/auth/callback' },
      /redirectUri must not contain spaces, tabs or line breaks \(at its ends either\): remove them/,
    ],
    [
      'an http redirectUri behind a leading space',
      { redirectUri: ' http://shop.example/auth/callback' },
      /redirectUri must be https, or http on a loopback host only/,
    ],
    [
      'a redirectUri with a trailing line break',
      { redirectUri: 'https://shop.example/auth/callback\n' },
      /redirectUri must not contain spaces, tabs or line breaks/,
    ],
    [
      'a path redirectUri with a leading space',
      { redirectUri: ' /auth/callback' },
      /redirectUri must not contain spaces, tabs or line breaks/,
    ],
    [
      'an authUrl with a trailing space',
      { authUrl: 'https://login.service.example ' },
      /authUrl must not contain spaces, tabs or line breaks/,
    ],
    [
      'an http authUrl in capitals without allowInsecureRequests',
      { authUrl: 'HTTP://login.service.example' },
      /authUrl must be https/,
    ],
    [
      'cookies.secure: false with an HTTPS:// redirectUri',
      { redirectUri: 'HTTPS://shop.example/auth/callback', cookies: { secure: false } },
      /cookies\.secure: false with an https redirectUri .*remove cookies\.secure/,
    ],
    [
      'a __Host- transaction cookie name (not on path /)',
      { cookies: { transactionName: '__Host-tx' } },
      /cookies\.transactionName must not start with __Host-: browsers refuse a __Host- cookie on a path other than \//,
    ],
    [
      'a __host- transaction cookie name (prefixes match in any case)',
      { cookies: { transactionName: '__host-tx' } },
      /cookies\.transactionName must not start with __Host-/,
    ],
    [
      'a __Host- session cookie name on plain http',
      { redirectUri: 'http://localhost:3000/auth/callback', cookies: { sessionName: '__Host-s' } },
      /cookies\.sessionName starts with __Host-, which browsers accept only on Secure cookies/,
    ],
    [
      'a session cookie name without __Host- with https',
      { cookies: { sessionName: 'sid' } },
      /cookies\.sessionName must start with __Host- when the cookies are Secure: .*Use __Host-<your name>, or leave it out \(the default is __Host-kyb-login-session\)\./,
    ],
    [
      'a __Secure- session cookie name with https',
      { cookies: { sessionName: '__Secure-sid' } },
      /cookies\.sessionName must start with __Host- when the cookies are Secure/,
    ],
    [
      'a session cookie name without __Host- on loopback with cookies.secure: true',
      { redirectUri: 'http://localhost:3000/auth/callback', cookies: { secure: true, sessionName: 'sid' } },
      /cookies\.sessionName must start with __Host-/,
    ],
    [
      'a session cookie name without __Host- with a path redirectUri (Secure on https requests)',
      { redirectUri: '/auth/callback', cookies: { sessionName: 'sid' } },
      /cookies\.sessionName must start with __Host- when the cookies are Secure on https requests .*cookies\.secure: false allows a name without it/,
    ],
  ])('%s', async (_name, change, message) => {
    const error = await configError({ ...valid, ...change });
    expect(error).toBeInstanceOf(KybLoginError);
    expect(error.code).toBe('config_invalid');
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(/Example: createLogin\(/);
  });

  it.each([
    ['http on 127.0.0.1', { redirectUri: 'http://127.0.0.1:3000/auth/callback' }],
    ['http on localhost', { redirectUri: 'http://localhost:3000/auth/callback' }],
    ['http on [::1]', { redirectUri: 'http://[::1]:3000/auth/callback' }],
    [
      'cookies.secure: false with http on loopback',
      { redirectUri: 'http://localhost:3000/auth/callback', cookies: { secure: false } },
    ],
    ['a session of 400 days', { session: { maxAgeSeconds: 400 * 24 * 3600 } }],
    ['an HTTPS:// redirectUri in capitals', { redirectUri: 'HTTPS://shop.example/auth/callback' }],
    ['a __Secure- transaction cookie name with https', { cookies: { transactionName: '__Secure-tx' } }],
    ['a __Host- session cookie name with https', { cookies: { sessionName: '__Host-s' } }],
    [
      'a __Host- session cookie name on loopback with cookies.secure: true',
      { redirectUri: 'http://localhost:3000/auth/callback', cookies: { secure: true, sessionName: '__Host-s' } },
    ],
    [
      'a session cookie name without __Host- on plain http (loopback)',
      { redirectUri: 'http://localhost:3000/auth/callback', cookies: { sessionName: 'sid' } },
    ],
    [
      'a session cookie name without __Host- with a path redirectUri and cookies.secure: false',
      { redirectUri: '/auth/callback', cookies: { secure: false, sessionName: 'sid' } },
    ],
    ['a __host- session cookie name (prefixes match in any case)', { cookies: { sessionName: '__host-sid' } }],
  ])('accepts %s', (_name, change) => {
    expect(() => validateLoginOptions({ ...valid, ...change })).not.toThrow();
  });

  it('never repeats a secret in the message', async () => {
    const error = await configError({
      ...valid,
      secret: 'short-secret-value',
      clientSecret: 'client-secret-value',
      redirect_uri: 'x',
    });
    expect(error.message).not.toContain('short-secret-value');
    expect(error.message).not.toContain('client-secret-value');
  });

  it('lists every problem at once', async () => {
    const error = await configError({ ...valid, secret: 'short', audience: undefined });
    expect(error.message).toMatch(/secret must be at least 32 bytes/);
    expect(error.message).toMatch(/audience is required/);
  });
});
