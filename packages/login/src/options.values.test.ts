import { describe, expect, it } from 'vitest';
import { KybLoginError } from './errors.js';
import { createLogin } from './login.js';
import type { LoginOptions } from './options.js';
import { configRefusal } from './testing/flow.js';

// Every option createLogin checks, at its edges: an invalid value stops the app with config_invalid naming the
// option, what it must be and the fix; a valid one, even at the limit of its range, is accepted.

const valid: LoginOptions = {
  authUrl: 'https://login.service.example',
  clientId: 'merchant',
  clientSecret: 'secret',
  redirectUri: 'https://shop.example/auth/callback',
  audience: 'https://api.shop.example',
  secret: 'x'.repeat(32),
};

const QUERY_PROBLEM =
  'redirectUri must not have a ?query: the token request must repeat the redirect URI exactly, and the OIDC library ' +
  '(openid-client) drops the query from it, so the login server would refuse every sign-in (invalid_grant). ' +
  'Register and use a redirect URI without a query; carry what the query held in returnTo.';

/** The options with a fetch that fails at once, unless they bring one: options that pass validation end in discovery. */
function withRefusedFetch(options: unknown): LoginOptions {
  const fetchRefused = (async () => {
    throw new Error('discovery attempted');
  }) as typeof fetch;
  return (
    typeof options === 'object' && options !== null && !('fetch' in options)
      ? { ...options, fetch: fetchRefused }
      : options
  ) as LoginOptions;
}

/** createLogin's refusal, before any request is made, or undefined when the options pass validation. */
async function outcome(options: unknown): Promise<unknown> {
  try {
    await createLogin(withRefusedFetch(options));
  } catch (error) {
    return error;
  }
  return undefined;
}

const configError = (options: unknown): Promise<KybLoginError> => configRefusal(createLogin(withRefusedFetch(options)));

/** The options passed validation: createLogin went on to discovery (or beyond), not refused them. */
async function expectAccepted(change: Record<string, unknown>): Promise<void> {
  const error = await outcome({ ...valid, ...change });
  if (error instanceof KybLoginError) expect(error.code).not.toBe('config_invalid');
}

describe('createLogin checks what options is', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'options must be an object, got null.'],
    ['a string', 'https://login.service.example', 'options must be an object, got string.'],
    ['undefined', undefined, 'options must be an object, got undefined.'],
  ])('refuses %s as options', async (_name, options, line) => {
    const error = await configError(options);
    expect(error.message).toBe(`Invalid createLogin options:\n- ${line}\nExample: ${exampleOf(error)}`);
  });

  it('puts each problem on a line of its own, after the heading and before the example', async () => {
    const error = await configError({ ...valid, audience: '', clientId: '' });
    expect(error.message).toBe(
      'Invalid createLogin options:\n- clientId is required: a non-empty string.\n- audience is required: a non-empty string.\n' +
        `Example: ${exampleOf(error)}`,
    );
    expect(exampleOf(error)).toMatch(/^createLogin\(\{ authUrl: /);
  });

  it('names an unknown option that is no other library\u2019s', async () => {
    const error = await configError({ ...valid, colour: 'blue' });
    expect(error.message).toContain('\n- unknown option "colour".\n');
  });
});

function exampleOf(error: Error): string {
  return error.message.slice(error.message.indexOf('\nExample: ') + '\nExample: '.length);
}

describe('createLogin checks authUrl and redirectUri', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['an empty redirectUri', { redirectUri: '' }, 'redirectUri is required: a URL string.'],
    ['an empty authUrl', { authUrl: '' }, 'authUrl is required: a URL string.'],
    ['a path as authUrl', { authUrl: '/issuer' }, 'authUrl must be an absolute URL.'],
    ['a host without scheme as authUrl', { authUrl: 'login.service.example' }, 'authUrl must be an absolute URL.'],
    [
      'a protocol-relative redirectUri (//host/path)',
      { redirectUri: '//evil.example/auth/callback' },
      'redirectUri must be an absolute URL or a path starting with /.',
    ],
    ['an ftp authUrl', { authUrl: 'ftp://login.service.example' }, 'authUrl must be an http(s) URL.'],
    ['a javascript: redirectUri', { redirectUri: 'javascript:alert(1)' }, 'redirectUri must be an http(s) URL.'],
    [
      'a redirectUri with a #fragment',
      { redirectUri: 'https://shop.example/auth/callback#done' },
      'redirectUri must not have a #fragment.',
    ],
    [
      'a redirectUri with a ?query, which openid-client drops from the token request',
      { redirectUri: 'https://shop.example/auth/callback?tenant=a' },
      QUERY_PROBLEM,
    ],
    ['a path redirectUri with a ?query', { redirectUri: '/auth/callback?tenant=a' }, QUERY_PROBLEM],
    ['a redirectUri ending in an empty ?', { redirectUri: 'https://shop.example/auth/callback?' }, QUERY_PROBLEM],
    [
      'a path redirectUri with a #fragment',
      { redirectUri: '/auth/callback#done' },
      'redirectUri must not have a #fragment.',
    ],
    [
      'an http redirectUri on a public host',
      { redirectUri: 'http://shop.example/auth/callback' },
      'redirectUri must be https, or http on a loopback host only (localhost, 127.0.0.1, [::1]): over plain http the ' +
        'authorization code and the session cookie cross the network in clear text. Register and use the https URL.',
    ],
  ])('refuses %s', async (_name, change, line) => {
    const error = await configError({ ...valid, ...change });
    expect(error.message).toContain(`\n- ${line}\n`);
  });

  it('accepts a path redirectUri, and an http authUrl with allowInsecureRequests', async () => {
    await expectAccepted({ redirectUri: '/auth/callback' });
    await expectAccepted({ authUrl: 'http://127.0.0.1:4000', allowInsecureRequests: true });
  });
});

describe('createLogin checks the numbers, flags, functions and the store', () => {
  it.each<[string, number, number]>([
    ['clockToleranceSeconds', 0, 60],
    ['jwksCooldownMs', 0, 3_600_000],
    ['transactionTtlSeconds', 30, 3600],
    ['timeoutSeconds', 1, 300],
  ])('%s: from %d to %d', async (name, min, max) => {
    const line = `\n- ${name} must be a number from ${min} to ${max}.\n`;
    for (const bad of [min - 1, max + 1, Number.NaN, Infinity, String(min + 1), null]) {
      expect((await configError({ ...valid, [name]: bad })).message, `${name}: ${String(bad)}`).toContain(line);
    }
    for (const good of [min, max, min + 1]) await expectAccepted({ [name]: good });
  });

  it('idTokenAlgorithm: each of the four, nothing else', async () => {
    for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA']) await expectAccepted({ idTokenAlgorithm: alg });
    for (const alg of ['', 'rs256', 'HS256']) {
      expect((await configError({ ...valid, idTokenAlgorithm: alg })).message).toContain(
        "\n- idTokenAlgorithm must be one of 'RS256' (the service's), 'PS256', 'ES256', 'EdDSA'; never 'none' or an HMAC algorithm.\n",
      );
    }
  });

  it.each(['business', 'trustProxy', 'allowInsecureRequests'])('%s must be true or false', async (name) => {
    for (const bad of ['true', 1, null]) {
      expect((await configError({ ...valid, [name]: bad })).message).toContain(`\n- ${name} must be true or false.\n`);
    }
    await expectAccepted({ [name]: true });
    await expectAccepted({ [name]: false });
  });

  it.each(['upsertUser', 'fetch'])('%s must be a function', async (name) => {
    for (const bad of ['fetch', {}, null]) {
      expect((await configError({ ...valid, [name]: bad })).message).toContain(`\n- ${name} must be a function.\n`);
    }
  });

  it('clientSecret must be a non-empty string when given', async () => {
    for (const bad of [42, null, '']) {
      expect((await configError({ ...valid, clientSecret: bad })).message).toContain(
        '\n- clientSecret must be a non-empty string, or left out for a public client.\n',
      );
    }
    await expectAccepted({ clientSecret: undefined });
  });

  it('transactionStore must have set and take', async () => {
    const set = async (): Promise<void> => {};
    const take = async (): Promise<undefined> => undefined;
    const line =
      '\n- transactionStore must have set(id, transaction, ttlSeconds) and take(id) methods (see memoryTransactionStore).\n';
    for (const bad of [null, 'redis', { take }, { set }, Object.assign(() => undefined, { set, take })]) {
      expect((await configError({ ...valid, transactionStore: bad })).message).toContain(line);
    }
    await expectAccepted({ transactionStore: { set, take } });
  });
});

describe('createLogin checks session', () => {
  const line = '\n- session must be false or { maxAgeSeconds }.\n';
  it.each<[string, unknown]>([
    ['a number of seconds (not { maxAgeSeconds })', 28800],
    ['true', true],
    ['null', null],
    ['an array', []],
    ['a string', '8h'],
  ])('refuses %s', async (_name, session) => {
    expect((await configError({ ...valid, session })).message).toContain(line);
  });

  it('accepts false, {}, and maxAgeSeconds from 60 to 400 days', async () => {
    await expectAccepted({ session: false });
    await expectAccepted({ session: {} });
    await expectAccepted({ session: { maxAgeSeconds: 60 } });
    await expectAccepted({ session: { maxAgeSeconds: 400 * 24 * 3600 } });
  });

  it('refuses maxAgeSeconds under a minute, or not a number', async () => {
    for (const bad of [59, '3600', null, Number.NaN]) {
      expect((await configError({ ...valid, session: { maxAgeSeconds: bad } })).message).toContain(
        '\n- session.maxAgeSeconds must be a number of seconds from 60 to 34560000 (400 days, the longest a browser keeps a cookie), e.g. 28800 for 8 hours.\n',
      );
    }
  });
});

describe('createLogin checks cookies', () => {
  it.each<[string, unknown]>([
    ['true', true],
    ['null', null],
    ['an array', []],
    ['a string', '__Host-sid'],
  ])('refuses %s as cookies', async (_name, cookies) => {
    expect((await configError({ ...valid, cookies })).message).toContain('\n- cookies must be an object.\n');
  });

  it('refuses a cookies.secure that is not a boolean', async () => {
    expect((await configError({ ...valid, cookies: { secure: 'yes' } })).message).toContain(
      '\n- cookies.secure must be true or false.\n',
    );
  });

  it('tells where the session lifetime is set when cookies.maxAge is given', async () => {
    expect((await configError({ ...valid, cookies: { maxAge: 3600 } })).message).toContain(
      'set the session lifetime with session.maxAgeSeconds. Remove it.',
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a space', { sessionName: '__Host-my session' }, 'sessionName'],
    ['a number', { sessionName: 42 }, 'sessionName'],
    ['a semicolon after the name', { transactionName: 'tx;Path=/' }, 'transactionName'],
    ['a semicolon before the name', { transactionName: 'x=1;tx' }, 'transactionName'],
    ['an empty name', { transactionName: '' }, 'transactionName'],
  ])('refuses a cookie name with %s', async (_name, cookies, name) => {
    expect((await configError({ ...valid, cookies })).message).toContain(
      `\n- cookies.${name} must be a cookie name (token characters only).\n`,
    );
  });

  it('says how to fix a __Host- transaction name, and a prefix on cookies that are not Secure', async () => {
    expect((await configError({ ...valid, cookies: { transactionName: '__Host-tx' } })).message).toContain(
      'so no sign-in would finish. Use a __Secure- name, or leave it out (the default is __Secure-kyb-login-tx over https).\n',
    );
    const insecure = await configError({
      ...valid,
      redirectUri: 'http://localhost:3000/auth/callback',
      cookies: { transactionName: '__Secure-tx' },
    });
    expect(insecure.message).toContain(
      '\n- cookies.transactionName starts with __Secure-, which browsers accept only on Secure cookies, and these are not ' +
        '(an http redirectUri, or cookies.secure: false): drop the prefix, or use https.\n',
    );
  });

  it('matches the prefixes at the start of the name only', async () => {
    // A transaction name with __Host- inside it is no __Host- cookie; a session name with it inside is not one either.
    await expectAccepted({ cookies: { transactionName: 'kyb__Host-tx' } });
    expect((await configError({ ...valid, cookies: { sessionName: 'kyb__Host-sid' } })).message).toContain(
      '\n- cookies.sessionName must start with __Host- when the cookies are Secure',
    );
    await expectAccepted({
      redirectUri: 'http://localhost:3000/auth/callback',
      cookies: { sessionName: 'kyb__Secure-sid', transactionName: 'kyb__Host-tx' },
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['another spelling of a known one', { transaction_name: 'tx' }, 'did you mean "cookies.transactionName"?'],
    ['a known one with a dash inside', { 'se-cure': true }, 'did you mean "cookies.secure"?'],
    ['an alias', { txName: 'tx' }, 'did you mean "cookies.transactionName"?'],
    ['another alias', { cookieName: '__Host-sid' }, 'did you mean "cookies.sessionName"?'],
    ['the first three letters of a known one', { tra: 'tx' }, 'did you mean "cookies.transactionName"?'],
  ])('guesses the cookies option meant from %s', async (_name, cookies, guess) => {
    const name = Object.keys(cookies)[0];
    expect((await configError({ ...valid, cookies })).message).toContain(
      `\n- unknown option "cookies.${name}": ${guess}\n`,
    );
  });

  it.each(['tr', 'colour'])('lists the cookies options when %s cannot be guessed', async (name) => {
    expect((await configError({ ...valid, cookies: { [name]: 'x' } })).message).toContain(
      `\n- unknown option "cookies.${name}"; the options of cookies are secure, transactionName, sessionName.\n`,
    );
  });
});
