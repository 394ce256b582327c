/**
 * Callbacks the routes refuse without signing anyone in: another state, a replay, a missing transaction cookie, a missing
 * code or iss, and an ID token of another issuer.
 */
import { expect, it } from 'vitest';
import { craftToken } from '../tokens.js';
import type { ConformanceSuite } from './app.js';

export function callbackRefusedCases(suite: ConformanceSuite): void {
  it('refuses a callback with another state: 400 state_mismatch, no session', async () => {
    const { app } = suite;
    const { agent, callbackUrl } = await suite.upToCallback();
    callbackUrl.searchParams.set('state', 'forged');
    const callback = await agent.request(callbackUrl);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ error: 'state_mismatch' });
    expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
    expect(app.errors.at(-1)?.code).toBe('state_mismatch');
    expect((await agent.request(`${app.origin}/me`)).status).toBe(401);
  });

  it('refuses a replayed callback', async () => {
    const { agent, callbackUrl } = await suite.upToCallback();
    const [name, value] = suite.transactionCookie(agent);
    const binding = `kyb-login-bind=${agent.cookies.get('kyb-login-bind')}`;
    expect((await agent.request(callbackUrl)).status).toBe(303);
    const replay = await fetch(callbackUrl, {
      headers: { cookie: `${name}=${value}; ${binding}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'transaction_replayed' });
  });

  it('refuses a callback without the transaction cookie (login started in another browser)', async () => {
    const { callbackUrl } = await suite.upToCallback();
    const callback = await fetch(callbackUrl, { redirect: 'manual' });
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ error: 'transaction_missing' });
  });

  it('does not let a forged callback use up the browser\u2019s pending login', async () => {
    const { app } = suite;
    const { agent, callbackUrl } = await suite.upToCallback('/me');
    const forged = await agent.request(`${app.origin}/auth/callback?state=forged&code=forged`);
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ error: 'state_mismatch' });
    const genuine = await agent.request(callbackUrl);
    expect([genuine.status, genuine.headers.get('location')]).toEqual([303, '/me']);
  });

  it('refuses a callback without a code: 400 callback_invalid', async () => {
    const { agent, callbackUrl } = await suite.upToCallback();
    callbackUrl.searchParams.delete('code');
    const callback = await agent.request(callbackUrl);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ error: 'callback_invalid' });
  });

  it.each<[string, (url: URL) => void]>([
    ['without iss', (url) => url.searchParams.delete('iss')],
    ['with the iss of another server', (url) => url.searchParams.set('iss', 'https://login.other.example')],
  ])('refuses a callback %s: 400 callback_invalid', async (_name, edit) => {
    const { agent, callbackUrl } = await suite.upToCallback();
    edit(callbackUrl);
    const callback = await agent.request(callbackUrl);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ error: 'callback_invalid' });
    expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
  });

  it('refuses a callback whose ID token names another issuer: 401 token_invalid about the token, not 503 issuer_mismatch', async () => {
    const { app } = suite;
    const { agent, callbackUrl } = await suite.upToCallback();
    app.forgeIdToken.value = (claims) =>
      craftToken(app.provider.signingKey, { ...claims, iss: 'https://login.other.example' });
    try {
      const errors = app.errors.length;
      const callback = await agent.request(callbackUrl);
      expect(callback.status).toBe(401);
      const body = (await callback.json()) as { error: string; message: string };
      expect(body.error).toBe('token_invalid');
      expect(body.message).toMatch(/ID token was not issued by this site\u2019s login server/);
      expect(app.errors.slice(errors).map((error) => error.code)).toEqual(['token_invalid']);
      expect(callback.headers.getSetCookie().some((c) => c.startsWith('kyb-login-session='))).toBe(false);
    } finally {
      app.forgeIdToken.value = undefined;
    }
  });
}
