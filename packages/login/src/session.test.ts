import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS } from './errors.js';
import { createLogin, type Login } from './login.js';
import { Sealer } from './sealed.js';
import {
  approvedCallback,
  COOKIE_SECRET,
  loginOptions,
  loginRequest,
  refusal,
  startProviderAndLogin,
} from './testing/flow.js';
import { TEST_ADDRESS, type TestProvider } from './testing/provider.js';
import { claimsOf, craftToken, tamperingFetch } from './testing/tokens.js';

// The session cookie a signed-in user carries, signing out, and refresh, which may only continue the same session.

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());

const USER = '0x00000000000000000000000000000000000000b2';

describe('the session cookie', () => {
  it('is __Host- and Secure on https, for the whole site, for eight hours by default, and read back', async () => {
    const secure = await createLogin(loginOptions(provider, { redirectUri: 'https://shop.example/auth/callback' }));
    const request = loginRequest('https://shop.example/account');
    const line = await secure.sessionCookie(request, USER);
    expect(line).toMatch(/^__Host-kyb-login-session=[^;]+; /);
    expect(line).toMatch(/; Path=\/(;|$)/);
    expect(line).toMatch(/; Max-Age=28800(;|$)/);
    expect(line).toMatch(/; Secure(;|$)/);
    expect(await secure.sessionUser(loginRequest('https://shop.example/account', [line]))).toBe(USER);
    expect(secure.clearSessionCookie(request)).toMatch(/^__Host-kyb-login-session=; Path=\/; Max-Age=0/);
  });

  it('is kyb-login-session on http, and lasts session.maxAgeSeconds when set', async () => {
    const short = await createLogin(loginOptions(provider, { session: { maxAgeSeconds: 120 } }));
    expect(short.sessions).toBe(true);
    const line = await short.sessionCookie(loginRequest('/'), USER);
    expect(line).toMatch(/^kyb-login-session=[^;]+; Path=\/; Max-Age=120(;|$)/);
    expect(line).not.toMatch(/Secure/);
    expect(await short.sessionUser(loginRequest('/', [line]))).toBe(USER);
    expect(short.clearSessionCookie(loginRequest('/'))).toMatch(/^kyb-login-session=; Path=\/; Max-Age=0/);
  });

  it('is not read at all with session: false, even one sealed with the same secret', async () => {
    const line = await login.sessionCookie(loginRequest('/'), USER);
    expect(await login.sessionUser(loginRequest('/', [line]))).toBe(USER);
    const without = await createLogin(loginOptions(provider, { session: false }));
    expect(without.sessions).toBe(false);
    expect(await without.sessionUser(loginRequest('/', [line]))).toBeUndefined();
  });

  it('stays valid across restarts and upgrades: one sealed for this secret’s session key is read', async () => {
    // The cookie format is what a running site's users carry: changing the key's label would sign everyone out.
    const earlier = await new Sealer(COOKIE_SECRET, 'kyb-login session v1').seal({ sub: USER }, 60);
    expect(await login.sessionUser(loginRequest('/', [`kyb-login-session=${earlier}`]))).toBe(USER);
  });

  it('survives a rotation of the secret: a session sealed before it is read while the old secret is listed', async () => {
    const line = await login.sessionCookie(loginRequest('/'), USER);
    const NEW = 'a-new-cookie-secret-of-thirty-two-bytes!!';
    const rotating = await createLogin(loginOptions(provider, { secret: [NEW, COOKIE_SECRET] }));
    expect(await rotating.sessionUser(loginRequest('/', [line]))).toBe(USER);
    const fresh = await rotating.sessionCookie(loginRequest('/'), USER);
    const rotated = await createLogin(loginOptions(provider, { secret: NEW }));
    expect(await rotated.sessionUser(loginRequest('/', [fresh]))).toBe(USER);
    expect(await rotated.sessionUser(loginRequest('/', [line]))).toBeUndefined();
  });

  it('gives no user for a missing, altered or expired cookie, or one whose subject is no string', async () => {
    const sealer = new Sealer(COOKIE_SECRET, 'kyb-login session v1');
    const line = await login.sessionCookie(loginRequest('/'), USER);
    const value = line.split(';')[0]!.split('=')[1]!;
    for (const cookie of [
      undefined,
      `kyb-login-session=${value.slice(0, -4)}AAAA`,
      `kyb-login-session=${await sealer.seal({ sub: USER }, -60)}`,
      `kyb-login-session=${await sealer.seal({ sub: 42 } as unknown as { sub: string }, 60)}`,
      `kyb-login-session=${await sealer.seal({}, 60)}`,
    ]) {
      expect(await login.sessionUser(loginRequest('/', cookie ? [cookie] : []))).toBeUndefined();
    }
  });
});

describe('refresh', () => {
  it.each<[string, unknown]>([
    ['an empty refresh token', ''],
    ['no refresh token', undefined],
    ['a refresh token that is no string', 42],
  ])('is refused with %s: token_missing, before the login server is asked', async (_name, token) => {
    const before = provider.lastTokenRequest;
    const error = await refusal(login.refresh(token as string, { userId: TEST_ADDRESS }));
    expect(error).toMatchObject({
      code: 'token_missing',
      status: 401,
      message: LOGIN_ERRORS.token_missing.message,
      detail: 'refresh needs a refresh token',
    });
    expect(provider.lastTokenRequest).toBe(before);
  });

  it('is config_invalid for session claims without aud, before the refresh token is spent', async () => {
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    const { aud: _aud, ...withoutAud } = claims;
    const error = await refusal(login.refresh(tokens.refreshToken!, { claims: withoutAud as typeof claims }));
    expect(error).toMatchObject({ code: 'config_invalid', status: 500 });
    expect(error.message).toMatch(
      /^login\.refresh needs the session it continues, .*OIDC Core 12\.2.*login\.refresh\(refreshToken, \{ userId \}\) with the signed-in user id\.$/,
    );
    expect(error.message).toMatch(/\{ claims \}\) with the ID token claims of the sign-in/);
    expect((await login.refresh(tokens.refreshToken!, { claims })).userId).toBe(TEST_ADDRESS);
  });

  it('continues a session given by its user id', async () => {
    const { tokens, userId } = await login.finish((await approvedCallback(login)).callback);
    const refreshed = await login.refresh(tokens.refreshToken!, { userId });
    expect(refreshed.userId).toBe(TEST_ADDRESS);
    expect(refreshed.claims?.sub).toBe(`svcid:${TEST_ADDRESS}`);
  });

  it('refuses to continue a session of another issuer: token_invalid about iss', async () => {
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    const error = await refusal(
      login.refresh(tokens.refreshToken!, { claims: { ...claims, iss: 'https://login.other.example' } }),
    );
    expect(error).toMatchObject({ code: 'token_invalid', status: 401 });
    expect(error.detail).toMatch(/the refreshed id_token's iss is not the session's/);
  });

  it('accepts session audiences listed in another order or twice (compared as sets)', async () => {
    const { tokens, claims } = await login.finish((await approvedCallback(login)).callback);
    const aud = [claims.aud].flat() as string[];
    const refreshed = await login.refresh(tokens.refreshToken!, { claims: { ...claims, aud: [...aud, ...aud] } });
    expect(refreshed.userId).toBe(TEST_ADDRESS);
  });

  it('accepts a refreshed ID token whose audiences are the session’s in another order', async () => {
    // Only the refresh answer is re-signed, with two audiences, in the reverse order of the session's.
    let forge = false;
    const twoAudiences = await createLogin(
      loginOptions(provider, {
        fetch: tamperingFetch(async (body) => {
          if (!forge || !body.id_token) return body;
          const claims = claimsOf(body.id_token) as Record<string, unknown>;
          const aud = [provider.confidentialClient.clientId, 'another-client'];
          return { ...body, id_token: await craftToken(provider.signingKey, { ...claims, aud, azp: aud[0] }) };
        }),
      }),
    );
    const { tokens, claims } = await twoAudiences.finish((await approvedCallback(twoAudiences)).callback);
    forge = true;
    const session = { claims: { ...claims, aud: ['another-client', provider.confidentialClient.clientId] } };
    const refreshed = await twoAudiences.refresh(tokens.refreshToken!, session);
    expect(refreshed.userId).toBe(TEST_ADDRESS);
    expect(refreshed.claims?.aud).toEqual([provider.confidentialClient.clientId, 'another-client']);
  });
});
