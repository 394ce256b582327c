import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogin } from './login.js';
import { memoryTransactionStore } from './transaction-store.js';
import { approvedCallback, browserCode, loginOptions, loginRequest, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider, TEST_ADDRESS, type TestProvider } from './testing/provider.js';
import { approveAtProvider, UserAgent } from './testing/user-agent.js';
import { tamperingFetch } from './testing/tokens.js';

let provider: TestProvider;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
});
afterAll(() => provider?.stop());

describe('the authorization request (spec 4.1)', () => {
  it('carries every fixed parameter, an S256 challenge and the exact redirect URI', async () => {
    const login = await createLogin(loginOptions(provider));
    const { url } = await login.start(loginRequest('/auth/login'));
    const p = url.searchParams;
    expect(url.origin + url.pathname).toBe(`${provider.issuer}/oauth2/auth`);
    expect(Object.fromEntries([...p].filter(([k]) => !['state', 'nonce', 'code_challenge'].includes(k)))).toEqual({
      client_id: provider.confidentialClient.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid offline offline_access',
      code_challenge_method: 'S256',
      prompt: 'consent',
      access_type: 'offline',
      audience: provider.audiences[0],
    });
    expect(p.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('asks for the business scope for business login', async () => {
    const login = await createLogin(loginOptions(provider, { business: true }));
    const { url } = await login.start(loginRequest('/auth/login'));
    expect(url.searchParams.get('scope')).toBe('openid offline offline_access business');
  });

  it('uses a fresh state, nonce and verifier for every login', async () => {
    const login = await createLogin(loginOptions(provider));
    const [a, b] = await Promise.all([
      login.start(loginRequest('/auth/login')),
      login.start(loginRequest('/auth/login')),
    ]);
    for (const name of ['state', 'nonce', 'code_challenge'])
      expect(a.url.searchParams.get(name)).not.toBe(b.url.searchParams.get(name));
  });

  it('keeps the transaction in an encrypted, httpOnly, SameSite=Lax cookie scoped to the callback path', async () => {
    const login = await createLogin(loginOptions(provider));
    const { url, setCookie } = await login.start(loginRequest('/auth/login'));
    const [pair, ...attributes] = setCookie[0]!.split('; ');
    expect(attributes).toEqual(['Path=/auth/callback', 'Max-Age=600', 'HttpOnly', 'SameSite=Lax']);
    const value = pair!.slice(pair!.indexOf('=') + 1);
    expect(value.split('.')).toHaveLength(5); // a compact JWE
    expect(value).not.toContain(url.searchParams.get('state'));
    expect(Buffer.from(value.split('.')[3]!, 'base64url').toString('latin1')).not.toContain(
      url.searchParams.get('state'),
    );
  });

  it('marks the cookies Secure, with a __Secure- name, when the redirect URI is https', async () => {
    const login = await createLogin(loginOptions(provider, { redirectUri: 'https://shop.example/auth/callback' }));
    const { setCookie } = await login.start(loginRequest('https://shop.example/auth/login'));
    expect(setCookie[0]).toMatch(/^__Secure-kyb-login-tx-[0-9a-z]{13}=/);
    expect(setCookie[0]!.split('; ')).toContain('Secure');
  });

  it('binds the transaction to the browser with a __Host- cookie (Secure, Path=/, no Domain) when the redirect URI is https', async () => {
    const login = await createLogin(loginOptions(provider, { redirectUri: 'https://shop.example/auth/callback' }));
    const { setCookie } = await login.start(loginRequest('https://shop.example/auth/login'));
    expect(setCookie).toHaveLength(2);
    expect(setCookie[1]).toMatch(
      /^__Host-kyb-login-bind=[A-Za-z0-9_-]{43}\.[0-9a-z]{13}:[0-9a-z]+:[0-9a-z]+; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax; Secure$/,
    );
    // The browser's binding is reused by its next login, so the first one's callback still matches it.
    const again = await login.start(loginRequest('https://shop.example/auth/login', setCookie));
    expect(again.setCookie[1]!.split(/[=.]/)[1]).toBe(setCookie[1]!.split(/[=.]/)[1]);
  });
});

describe('redirect URI behind a proxy', () => {
  const proxied = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' };

  it('resolves a path redirect URI from X-Forwarded-* when trustProxy is set', async () => {
    const login = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback', trustProxy: true }));
    const { url } = await login.start(loginRequest('http://10.0.0.7:3000/auth/login', [], proxied));
    expect(url.searchParams.get('redirect_uri')).toBe('https://shop.example/auth/callback');
  });

  it('ignores X-Forwarded-* without trustProxy: plain http on a real host, refused with the fix', async () => {
    const login = await createLogin(loginOptions(provider, { redirectUri: '/auth/callback' }));
    const error = await refusal(login.start(loginRequest('http://10.0.0.7:3000/auth/login', [], proxied)));
    expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
    expect(error.message).toMatch(/set trustProxy: true/);
  });
});

describe('sign-in over HTTP against the provider', () => {
  it('signs a confidential client in: the user id is the svcid address, with bearer, ID and refresh tokens', async () => {
    const login = await createLogin(loginOptions(provider));
    const { callback } = await approvedCallback(login, { returnTo: '/orders?page=2' });
    const result = await login.finish(callback);
    expect(result.userId).toBe(TEST_ADDRESS);
    expect(result.claims.sub).toBe(`svcid:${TEST_ADDRESS}`);
    expect(result.claims.iss).toBe(provider.issuer);
    expect(result.returnTo).toBe('/orders?page=2');
    expect(result.tokens).toMatchObject({ tokenType: 'bearer', expiresIn: 600 });
    expect(result.tokens.refreshToken).toEqual(expect.any(String));
    expect(result.tokens.idToken.split('.')).toHaveLength(3);
    expect(result.isNewUser).toBeUndefined();
    expect(result.setCookie).toMatch(/^kyb-login-tx-[0-9a-z]{13}=; Path=\/auth\/callback; Max-Age=0/);
  });

  it('authenticates a confidential client with HTTP Basic, and sends the code, verifier and redirect URI', async () => {
    const login = await createLogin(loginOptions(provider));
    const { callback, callbackUrl } = await approvedCallback(login);
    await login.finish(callback);
    const sent = provider.lastTokenRequest!;
    // RFC 6749 2.3.1: id and secret are form-encoded before Basic's base64.
    const basic = Buffer.from(sent.authorization!.replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':')
      .map(decodeURIComponent);
    expect(basic).toEqual([provider.confidentialClient.clientId, provider.confidentialClient.clientSecret]);
    expect(sent.form.get('grant_type')).toBe('authorization_code');
    expect(sent.form.get('code')).toBe(callbackUrl.searchParams.get('code'));
    expect(sent.form.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(sent.form.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent.form.has('client_secret')).toBe(false);
  });

  it('lets a public client exchange with client_id and PKCE alone', async () => {
    const login = await createLogin(
      loginOptions(provider, { clientId: provider.publicClient.clientId, clientSecret: undefined }),
    );
    const { callback } = await approvedCallback(login);
    const result = await login.finish(callback);
    expect(result.userId).toBe(TEST_ADDRESS);
    expect(provider.lastTokenRequest!.authorization).toBeUndefined();
    expect(provider.lastTokenRequest!.form.get('client_id')).toBe(provider.publicClient.clientId);
  });

  it('reports a first sign-in as a sign-up through upsertUser, and the next one as a login', async () => {
    const known = new Set<string>();
    const login = await createLogin(
      loginOptions(provider, { upsertUser: (id) => !known.has(id) && Boolean(known.add(id)) }),
    );
    const address = '0x00000000000000000000000000000000000000a1';
    const first = await login.finish((await approvedCallback(login, { address })).callback);
    const second = await login.finish((await approvedCallback(login, { address })).callback);
    expect([first.userId, first.isNewUser, second.isNewUser]).toEqual([address, true, false]);
  });

  it('keeps the transaction in a store when one is configured', async () => {
    const login = await createLogin(loginOptions(provider, { transactionStore: memoryTransactionStore() }));
    const inCookie = await createLogin(loginOptions(provider));
    const { callback, setCookie } = await approvedCallback(login, { returnTo: '/x' });
    const cookieMode = (await inCookie.start(loginRequest('/auth/login'), { returnTo: '/x' })).setCookie;
    expect(setCookie[0]!.length).toBeLessThan(cookieMode[0]!.length - 150); // only an id travels, not state, verifier and nonce
    expect((await login.finish(callback)).returnTo).toBe('/x');
  });

  it('lets two logins started in one browser both finish with a transaction store, in either order', async () => {
    const stored = await createLogin(loginOptions(provider, { transactionStore: memoryTransactionStore() }));
    const first = await stored.start(loginRequest('/auth/login'), { returnTo: '/first' });
    const second = await stored.start(loginRequest('/auth/login', first.setCookie), { returnTo: '/second' });
    const agent = new UserAgent();
    const cookies = [first.setCookie[0]!, ...second.setCookie];
    const secondBack = await stored.finish(loginRequest(await approveAtProvider(agent, second.url), cookies));
    const firstBack = await stored.finish(loginRequest(await approveAtProvider(agent, first.url), cookies));
    expect([secondBack.returnTo, firstBack.returnTo, firstBack.userId]).toEqual(['/second', '/first', TEST_ADDRESS]);
  });

  it('a finished login leaves the binding cookie’s list, so logins finished in another tab never crowd out one in progress', async () => {
    const login = await createLogin(loginOptions(provider));
    // The browser's cookie jar, as Set-Cookie lines leave it (Max-Age=0 deletes).
    const jar = new Map<string, string>();
    const apply = (lines: string[]) => {
      for (const line of lines) {
        const pair = line.split(';')[0]!;
        const name = pair.slice(0, pair.indexOf('='));
        if (/Max-Age=0/.test(line)) jar.delete(name);
        else jar.set(name, pair);
      }
    };
    const request = (url: string | URL) => loginRequest(url, [...jar.values()]);
    const agent = new UserAgent();
    const pending = await login.start(request('/auth/login'), { returnTo: '/pending' });
    apply(pending.setCookie);
    const pendingCallback = await approveAtProvider(agent, pending.url);
    for (let i = 0; i < 6; i++) {
      const other = await login.start(request('/auth/login'));
      apply(other.setCookie);
      const callback = request(await approveAtProvider(agent, other.url));
      const finished = await login.finish(callback);
      apply([finished.setCookie, ...(await login.callbackCleanupCookies(callback))]);
    }
    apply((await login.start(request('/auth/login'))).setCookie);
    expect((await login.finish(request(pendingCallback))).returnTo).toBe('/pending');
  });

  it('refreshes: new access token, same user', async () => {
    const login = await createLogin(loginOptions(provider));
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    const refreshed = await login.refresh(tokens.refreshToken!, { claims });
    expect(refreshed.userId).toBe(TEST_ADDRESS);
    expect(refreshed.tokens.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.tokens.refreshToken).toEqual(expect.any(String));
    expect(provider.lastTokenRequest!.form.get('grant_type')).toBe('refresh_token');
  });

  it('refreshes when the answer has no ID token (OIDC Core 12.2): new tokens, no user or claims', async () => {
    let dropIdToken = false;
    // The local provider always sends one; the real provider's answer, with the ID token taken out, stands in.
    const fetchWithout = tamperingFetch((body) => {
      if (!dropIdToken) return body;
      const { id_token: _dropped, ...rest } = body;
      return rest;
    });
    const login = await createLogin(loginOptions(provider, { fetch: fetchWithout }));
    const { tokens, userId } = await login.finish((await approvedCallback(login)).callback);
    dropIdToken = true;
    const refreshed = await login.refresh(tokens.refreshToken!, { userId });
    expect(refreshed.tokens.accessToken).toEqual(expect.any(String));
    expect(refreshed.tokens.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.tokens.refreshToken).toEqual(expect.any(String));
    expect(refreshed.tokens.idToken).toBeUndefined();
    expect([refreshed.userId, refreshed.claims]).toEqual([undefined, undefined]);
    expect((await login.verifyAccessToken(refreshed.tokens.accessToken)).userId).toBe(TEST_ADDRESS);
  });

  it('verifies the access token for the audience (bearer tokens on API routes)', async () => {
    const login = await createLogin(loginOptions(provider));
    const { tokens } = await login.finish((await approvedCallback(login)).callback);
    const user = await login.verifyAccessToken(tokens.accessToken);
    expect(user.userId).toBe(TEST_ADDRESS);
    expect(user.claims.aud).toBe(provider.audiences[0]);
  });

  it('exchanges a code and verifier handed over by the browser (the backend exchange of spec 4.1)', async () => {
    const login = await createLogin(loginOptions(provider));
    // What the browser app does itself: its own verifier and state, the redirect, the callback.
    const { code, codeVerifier } = await browserCode(provider);
    const result = await login.exchangeCode({ code, codeVerifier });
    expect(result.userId).toBe(TEST_ADDRESS);
    expect(provider.lastTokenRequest!.authorization).toMatch(/^Basic /);
  });
});
