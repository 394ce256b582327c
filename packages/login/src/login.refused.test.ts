import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogin, type Login } from './login.js';
import { memoryTransactionStore } from './transaction-store.js';
import {
  approvedCallback,
  browserCode,
  loginOptions,
  loginRequest,
  REDIRECT_URI,
  refusal,
  startProviderAndLogin,
} from './testing/flow.js';
import { TEST_ADDRESS, type TestProvider } from './testing/provider.js';
import { claimsOf, craftToken, tamperingFetch, type Forgery } from './testing/tokens.js';

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

/** Nothing secret ever appears in what a refusal says. */
function expectNoSecrets(error: { message: string; detail?: string }, secrets: Array<string | null | undefined>): void {
  for (const secret of secrets) {
    if (!secret) continue;
    expect(error.message).not.toContain(secret);
    expect(error.detail ?? '').not.toContain(secret);
  }
}

describe('the callback is refused', () => {
  it('without a state', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    callbackUrl.searchParams.delete('state');
    expect((await refusal(login.finish(loginRequest(callbackUrl, setCookie)))).code).toBe('state_mismatch');
  });

  it('with another state (CSRF)', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    callbackUrl.searchParams.set('state', oidc.randomState());
    expect((await refusal(login.finish(loginRequest(callbackUrl, setCookie)))).code).toBe('state_mismatch');
  });

  it("with the state and code of another browser's login", async () => {
    const mine = await approvedCallback(login);
    const theirs = await approvedCallback(login);
    expect((await refusal(login.finish(loginRequest(theirs.callbackUrl, mine.setCookie)))).code).toBe('state_mismatch');
  });

  it.each<[string, () => Parameters<typeof loginOptions>[1]]>([
    ['in the cookie', () => ({})],
    ['in a transaction store', () => ({ transactionStore: memoryTransactionStore() })],
  ])(
    'with a transaction cookie planted from another browser (transaction %s): state_mismatch, nothing used up',
    async (_name, extra) => {
      const bound = await createLogin(loginOptions(provider, extra()));
      // Cookie tossing: a sibling subdomain sets the attacker's transaction cookie (not their __Host- binding) in the
      // victim's browser, which has no binding yet, or one of its own.
      const attacker = await approvedCallback(bound, { address: '0x1111111111111111111111111111111111111111' });
      const planted = attacker.setCookie[0]!;
      const victimBinding = (await bound.start(loginRequest('/auth/login'))).setCookie[1]!;
      // Also with the attacker's binding planted under a name that only reads as the binding once JavaScript's trim() has
      // stripped its leading non-breaking space (which the browser's __Host- rule does not cover).
      const lookalikeBinding = `\u00a0${attacker.setCookie[1]!}`;
      for (const victimCookies of [
        [planted],
        [planted, victimBinding],
        [planted, lookalikeBinding],
        [planted, lookalikeBinding, victimBinding],
      ]) {
        const error = await refusal(bound.finish(loginRequest(attacker.callbackUrl, victimCookies)));
        expect(error).toMatchObject({ code: 'state_mismatch', status: 400 });
        expect(error.detail).toMatch(/not started in this browser/);
      }
      // The refusals spent nothing: in the browser that started it, that login still finishes.
      expect((await bound.finish(attacker.callback)).userId).toBe('0x1111111111111111111111111111111111111111');
    },
  );

  it('without the transaction cookie', async () => {
    const { callbackUrl } = await approvedCallback(login);
    expect(await refusal(login.finish(loginRequest(callbackUrl)))).toMatchObject({ code: 'transaction_missing' });
  });

  it('with an altered transaction cookie', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    const [pair] = setCookie[0]!.split(';');
    // One character in the middle of the value, where every bit counts: the last characters of base64url may carry
    // bits a decoder ignores (`…AB` and `…AA` can decode to the same bytes, and then the altered cookie is genuine).
    let at = pair!.indexOf('=') + Math.floor((pair!.length - pair!.indexOf('=')) / 2);
    while (!/[A-Za-z0-9_-]/.test(pair![at]!)) at++;
    const altered = pair!.slice(0, at) + (pair![at] === 'A' ? 'B' : 'A') + pair!.slice(at + 1);
    expect((await refusal(login.finish(loginRequest(callbackUrl, [altered, ...setCookie.slice(1)])))).code).toBe(
      'transaction_invalid',
    );
  });

  it('with a transaction cookie sealed under another secret', async () => {
    const other = await createLogin(loginOptions(provider, { secret: 'another-secret-of-at-least-32-bytes-long' }));
    const { callback } = await approvedCallback(other);
    expect((await refusal(login.finish(callback))).code).toBe('transaction_invalid');
  });

  it('when replayed (the same callback twice)', async () => {
    const { callback } = await approvedCallback(login);
    await login.finish(callback);
    expect((await refusal(login.finish(callback))).code).toBe('transaction_replayed');
  });

  it('when replayed with a transaction store', async () => {
    const stored = await createLogin(loginOptions(provider, { transactionStore: memoryTransactionStore() }));
    const { callback } = await approvedCallback(stored);
    await stored.finish(callback);
    expect((await refusal(stored.finish(callback))).code).toBe('transaction_replayed');
  });

  it('with a store, for a login the full store evicted: transaction_missing (start again), not transaction_replayed', async () => {
    const small = await createLogin(
      loginOptions(provider, { transactionStore: memoryTransactionStore({ maxEntries: 2 }) }),
    );
    const victim = await approvedCallback(small);
    // Two more logins started (a flood of GET /auth/login, say) push the victim's out of the full store.
    await small.start(loginRequest('/auth/login'));
    await small.start(loginRequest('/auth/login'));
    const error = await refusal(small.finish(victim.callback));
    expect(error).toMatchObject({ code: 'transaction_missing', status: 400 });
    expect(error.message).toMatch(/start again/);
  });

  it('when the login server denied the sign-in', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    const denied = new URL(REDIRECT_URI);
    denied.search = new URLSearchParams({
      error: 'access_denied',
      state: callbackUrl.searchParams.get('state')!,
      iss: provider.issuer,
    }).toString();
    expect((await refusal(login.finish(loginRequest(denied, setCookie)))).code).toBe('authorization_denied');
  });

  it('when the response names another issuer (RFC 9207 iss)', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    callbackUrl.searchParams.set('iss', `${provider.issuer}/`);
    // Anyone can send such a callback: the request's fault (400), not the login server's (issuer_mismatch, 503).
    expect(await refusal(login.finish(loginRequest(callbackUrl, setCookie)))).toMatchObject({
      code: 'callback_invalid',
      status: 400,
    });
  });

  it.each<[string, (url: URL) => void]>([
    ['without a code', (url) => url.searchParams.delete('code')],
    ['with two codes', (url) => url.searchParams.append('code', 'another')],
    ['without iss, which the login server announces it sends', (url) => url.searchParams.delete('iss')],
  ])('%s: 400 callback_invalid, not a token or issuer problem', async (_name, edit) => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    edit(callbackUrl);
    expect(await refusal(login.finish(loginRequest(callbackUrl, setCookie)))).toMatchObject({
      code: 'callback_invalid',
      status: 400,
    });
  });

  it('without revealing the code or the verifier in the error', async () => {
    const { callbackUrl, setCookie } = await approvedCallback(login);
    callbackUrl.searchParams.set('state', 'wrong');
    const error = await refusal(login.finish(loginRequest(callbackUrl, setCookie)));
    expectNoSecrets(error, [
      callbackUrl.searchParams.get('code'),
      ...setCookie.map((cookie) => cookie.split(';')[0]!.split('=')[1]),
    ]);
  });
});

describe('the code exchange is refused', () => {
  it('for a replayed code', async () => {
    const { code, codeVerifier } = await browserCode(provider);
    await login.exchangeCode({ code, codeVerifier });
    const error = await refusal(login.exchangeCode({ code, codeVerifier }));
    expect(error.code).toBe('code_exchange_failed');
    expectNoSecrets(error, [code, codeVerifier]);
  });

  it('for a verifier that does not match the challenge', async () => {
    const { code } = await browserCode(provider);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const error = await refusal(login.exchangeCode({ code, codeVerifier }));
    expect(error.code).toBe('code_exchange_failed');
    expectNoSecrets(error, [code, codeVerifier]);
  });

  // A wrong client secret is not the code's fault: token-endpoint.client-auth.test.ts.
});

describe('discovery is refused', () => {
  /** A login server whose discovery document names `issuer` (everything else from the real provider), at `path`. */
  async function withDiscoveredIssuer(
    issuerFor: (origin: string) => string,
    run: (authUrl: string) => Promise<void>,
    path = '/login',
  ): Promise<void> {
    const server = createServer(async (req, res) => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const document = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ...document, issuer: issuerFor(origin) }));
      void req;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('when the document names another issuer', async () => {
    await withDiscoveredIssuer(
      () => provider.issuer,
      async (authUrl) =>
        expect((await refusal(createLogin(loginOptions(provider, { authUrl })))).code).toBe('issuer_mismatch'),
    );
  });

  it('when the issuers differ only by a trailing slash', async () => {
    await withDiscoveredIssuer(
      (origin) => `${origin}/login/`,
      async (authUrl) => {
        const error = await refusal(createLogin(loginOptions(provider, { authUrl })));
        expect(error.code).toBe('issuer_mismatch');
        expect(error.message).toMatch(/trailing slash/);
      },
    );
  });

  it.each<[string, (origin: string) => string]>([
    ['a scheme in capitals', (origin) => origin.replace('http:', 'HTTP:')],
    ['a shortened IPv4 address', (origin) => origin.replace('127.0.0.1', '127.1')],
    ['a doubled slash', (origin) => `${origin}//`],
  ])(
    'at a root issuer, when the document spells it with %s (only a trailing slash is no difference)',
    async (_name, issuerFor) => {
      await withDiscoveredIssuer(
        issuerFor,
        async (authUrl) =>
          expect((await refusal(createLogin(loginOptions(provider, { authUrl })))).code).toBe('issuer_mismatch'),
        '',
      );
    },
  );

  it('when the login server is not reachable', async () => {
    const error = await refusal(createLogin(loginOptions(provider, { authUrl: 'http://127.0.0.1:9' })));
    expect(error.code).toBe('discovery_failed');
  });
});

describe('a root issuer with or without its trailing slash is one issuer', () => {
  it('authUrl with the slash, the document without: starts, and signs in', async () => {
    const slashed = await createLogin(loginOptions(provider, { authUrl: `${provider.issuer}/` }));
    expect(slashed.issuer).toBe(provider.issuer);
    expect((await slashed.finish((await approvedCallback(slashed)).callback)).claims.iss).toBe(provider.issuer);
  });

  it('authUrl without the slash, the document with it: starts', async () => {
    const server = createServer((_req, res) => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      void fetch(`${provider.issuer}/.well-known/openid-configuration`)
        .then((answer) => answer.json())
        .then((document) =>
          res
            .setHeader('content-type', 'application/json')
            .end(JSON.stringify({ ...(document as object), issuer: `${origin}/` })),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await createLogin(loginOptions(provider, { authUrl: origin }))).issuer).toBe(`${origin}/`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the ID token of the token response is refused', () => {
  /** A sign-in whose token response carries the ID token `make` builds from the genuine one's claims. */
  async function signInWithIdToken(
    make: (claims: Record<string, unknown>) => Promise<string>,
  ): Promise<{ code: string; detail?: string; message: string }> {
    const tampered = await createLogin(
      loginOptions(provider, {
        fetch: tamperingFetch(async (body) => ({
          ...body,
          id_token: await make(claimsOf(body.id_token) as Record<string, unknown>),
        })),
      }),
    );
    return refusal(tampered.finish((await approvedCallback(tampered)).callback));
  }
  const sign = (
    claims: Record<string, unknown>,
    forgery: Forgery = 'rs256',
    header: { typ?: string } = {},
  ): Promise<string> => craftToken(provider.signingKey, claims, forgery, header);
  const now = (): number => Math.floor(Date.now() / 1000);

  it('when it is genuine but re-signed unchanged (control: the tampering itself is accepted)', async () => {
    const tampered = await createLogin(
      loginOptions(provider, {
        fetch: tamperingFetch(async (body) => ({
          ...body,
          id_token: await sign(claimsOf(body.id_token) as Record<string, unknown>),
        })),
      }),
    );
    expect((await tampered.finish((await approvedCallback(tampered)).callback)).userId).toMatch(/^0x/);
  });

  it('from an issuer that differs by a trailing slash: 401 token_invalid about the token (not issuer_mismatch about discovery)', async () => {
    const error = await signInWithIdToken((c) => sign({ ...c, iss: `${provider.issuer}/` }));
    expect(error).toMatchObject({ code: 'token_invalid', status: 401 });
    expect(error.message).toMatch(/^The ID token was not issued by this site\u2019s login server/);
  });

  it('from another issuer: 401 token_invalid about the token', async () => {
    expect(await signInWithIdToken((c) => sign({ ...c, iss: 'https://login.other.example' }))).toMatchObject({
      code: 'token_invalid',
      status: 401,
    });
  });

  it('for another audience', async () => {
    expect((await signInWithIdToken((c) => sign({ ...c, aud: 'another-client' }))).code).toBe('token_invalid');
  });

  it('with alg none', async () => {
    expect((await signInWithIdToken((c) => sign(c, 'none'))).code).toBe('token_invalid');
  });

  it("signed with HS256 using the login server's public key as the secret", async () => {
    expect((await signInWithIdToken((c) => sign(c, 'hs256-public-key'))).code).toBe('token_invalid');
  });

  it("signed by a key that is not the login server's (same kid)", async () => {
    expect((await signInWithIdToken((c) => sign(c, 'other-key'))).code).toBe('token_invalid');
  });

  it('when it is a KYB attestation, even one signed by the login key for this client', async () => {
    const error = await signInWithIdToken((c) =>
      sign({ ...c, event_id: '01JD0000000000000000000000', seq: 1 }, 'rs256', { typ: 'kyb-attestation+jwt' }),
    );
    expect(error.code).toBe('token_invalid');
    expect(error.detail).toMatch(/typ/);
  });

  it('with a sub that lacks the svcid: prefix', async () => {
    expect((await signInWithIdToken((c) => sign({ ...c, sub: String(c.sub).replace('svcid:', '') }))).code).toBe(
      'subject_invalid',
    );
  });

  it('when expired beyond the leeway', async () => {
    expect((await signInWithIdToken((c) => sign({ ...c, iat: now() - 3600, exp: now() - 120 }))).code).toBe(
      'token_expired',
    );
  });

  it('when issued in the future beyond the leeway', async () => {
    expect((await signInWithIdToken((c) => sign({ ...c, iat: now() + 300, exp: now() + 900 }))).code).toBe(
      'token_invalid',
    );
  });

  it('with another nonce', async () => {
    expect((await signInWithIdToken((c) => sign({ ...c, nonce: 'replayed-from-another-login' }))).code).toBe(
      'token_invalid',
    );
  });

  it('when the token response is not of type bearer', async () => {
    const tampered = await createLogin(
      loginOptions(provider, { fetch: tamperingFetch((body) => ({ ...body, token_type: 'DPoP' })) }),
    );
    expect((await refusal(tampered.finish((await approvedCallback(tampered)).callback))).code).toBe('token_invalid');
  });
});

describe('refresh refuses a refreshed ID token of another session (OIDC Core 12.2)', () => {
  let forge: ((claims: Record<string, unknown>) => Promise<string>) | undefined;
  let refreshing: Login;
  beforeAll(async () => {
    // Only refresh answers are forged: the sign-in that made the session is genuine.
    refreshing = await createLogin(
      loginOptions(provider, {
        fetch: tamperingFetch(async (body) =>
          forge && body.id_token
            ? { ...body, id_token: await forge(claimsOf(body.id_token) as Record<string, unknown>) }
            : body,
        ),
      }),
    );
  });
  const sign = (claims: Record<string, unknown>): Promise<string> => craftToken(provider.signingKey, claims);
  async function refreshWith(
    make: (claims: Record<string, unknown>) => Promise<string>,
    session?: 'userId',
  ): Promise<Awaited<ReturnType<Login['refresh']>>> {
    forge = undefined;
    const { tokens, claims, userId } = await refreshing.finish((await approvedCallback(refreshing)).callback);
    forge = make;
    try {
      return await refreshing.refresh(tokens.refreshToken!, session === 'userId' ? { userId } : { claims });
    } finally {
      forge = undefined;
    }
  }

  it('accepts the same sub, iss and aud, re-signed (control)', async () => {
    expect((await refreshWith((c) => sign(c))).userId).toBe(TEST_ADDRESS);
    expect((await refreshWith((c) => sign({ ...c, aud: [c.aud].flat() }))).userId).toBe(TEST_ADDRESS);
  });

  it.each<[string, (claims: Record<string, unknown>) => Record<string, unknown>, RegExp]>([
    ['another sub', (c) => ({ ...c, sub: 'svcid:0x1111111111111111111111111111111111111111' }), /\bsub\b/],
    ['another iss', (c) => ({ ...c, iss: 'https://login.other.example' }), /iss/],
    [
      'another aud (one more audience, this client as azp)',
      (c) => ({ ...c, aud: [c.aud, 'another-client'].flat(), azp: provider.confidentialClient.clientId }),
      /\baud\b/,
    ],
  ])('with %s: 401 token_invalid', async (_name, change, detail) => {
    const error = await refusal(refreshWith((c) => sign(change(c))));
    expect(error).toMatchObject({ code: 'token_invalid', status: 401 });
    expect(error.detail).toMatch(detail);
  });

  it('with another sub, when the session is given by its user id', async () => {
    const error = await refusal(
      refreshWith((c) => sign({ ...c, sub: 'svcid:0x1111111111111111111111111111111111111111' }), 'userId'),
    );
    expect(error).toMatchObject({ code: 'token_invalid', detail: expect.stringMatching(/\bsub\b.*OIDC Core 12\.2/) });
  });

  it.each<[string, unknown]>([
    ['no session', undefined],
    ['claims without sub', { claims: { iss: 'x', aud: 'y' } }],
    ['an empty user id', { userId: '' }],
  ])('is config_invalid with %s, before the refresh token is spent', async (_name, session) => {
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    const error = await refusal(login.refresh(tokens.refreshToken!, session as never));
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect(error.message).toMatch(/login\.refresh\(refreshToken, \{ claims \}\)/);
    expect((await login.refresh(tokens.refreshToken!, { claims })).userId).toBe(TEST_ADDRESS);
  });
});

describe('verifyAccessToken refuses', () => {
  let genuine: { accessToken: string; idToken: string };
  beforeAll(async () => {
    const { tokens } = await login.finish((await approvedCallback(login)).callback);
    genuine = tokens;
  });
  const sign = (
    claims: Record<string, unknown>,
    forgery: Forgery = 'rs256',
    header: { typ?: string } = {},
  ): Promise<string> => craftToken(provider.signingKey, claims, forgery, { typ: 'at+jwt', ...header });
  const now = (): number => Math.floor(Date.now() / 1000);

  it('accepts the genuine access token (control)', async () => {
    expect((await login.verifyAccessToken(genuine.accessToken)).userId).toMatch(/^0x/);
  });

  it('an ID token (its audience is the client, not the API)', async () => {
    expect((await refusal(login.verifyAccessToken(genuine.idToken))).code).toBe('token_invalid');
  });

  it('a token for another audience', async () => {
    expect(
      (
        await refusal(
          login.verifyAccessToken(await sign({ ...claimsOf(genuine.accessToken), aud: 'https://other.api' })),
        )
      ).code,
    ).toBe('token_invalid');
  });

  it('an expired token', async () => {
    const expired = await sign({ ...claimsOf(genuine.accessToken), iat: now() - 3600, exp: now() - 120 });
    expect((await refusal(login.verifyAccessToken(expired))).code).toBe('token_expired');
  });

  it('alg none', async () => {
    expect((await refusal(login.verifyAccessToken(await sign(claimsOf(genuine.accessToken), 'none')))).code).toBe(
      'token_invalid',
    );
  });

  it('HS256 signed with the public key', async () => {
    expect(
      (await refusal(login.verifyAccessToken(await sign(claimsOf(genuine.accessToken), 'hs256-public-key')))).code,
    ).toBe('token_invalid');
  });

  it('a KYB attestation', async () => {
    const attestation = await sign(claimsOf(genuine.accessToken), 'rs256', { typ: 'kyb-attestation+jwt' });
    expect((await refusal(login.verifyAccessToken(attestation))).code).toBe('token_invalid');
  });

  it('an issuer with a trailing slash', async () => {
    const token = await sign({ ...claimsOf(genuine.accessToken), iss: `${provider.issuer}/` });
    expect((await refusal(login.verifyAccessToken(token))).code).toBe('token_invalid');
  });

  it('a sub without svcid:', async () => {
    const token = await sign({ ...claimsOf(genuine.accessToken), sub: '0xabc' });
    expect((await refusal(login.verifyAccessToken(token))).code).toBe('subject_invalid');
  });

  it('an empty token', async () => {
    expect((await refusal(login.verifyAccessToken(''))).code).toBe('token_missing');
  });
});

describe('the return path', () => {
  it.each([
    '//evil.example/',
    'https://evil.example/',
    '/\\evil.example',
    '/%2F%2Fevil.example',
    'javascript:alert(1)',
    '/\t/evil.example',
  ])('refuses %j (another origin)', async (returnTo) => {
    expect((await refusal(login.start(loginRequest('/auth/login'), { returnTo }))).code).toBe('return_path_invalid');
  });

  it('refuses one that would make the transaction cookie larger than browsers keep (4096 bytes)', async () => {
    // The longest return path fits beside a redirect URI of usual length, not beside a very long one.
    const longRedirect = await createLogin(
      loginOptions(provider, { redirectUri: `http://127.0.0.1:9/${'x'.repeat(2000)}/auth/callback` }),
    );
    const returnTo = `/${'a'.repeat(1023)}`;
    expect(
      (await login.start(loginRequest('/auth/login'), { returnTo })).setCookie[0]!.split(';')[0]!.length,
    ).toBeLessThanOrEqual(4096);
    expect(await refusal(longRedirect.start(loginRequest('/auth/login'), { returnTo }))).toMatchObject({
      code: 'return_path_invalid',
      status: 400,
    });
  });
});
