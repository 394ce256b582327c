import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogin } from './login.js';
import { LoginRoutes } from './routes.js';
import { TokenVerifier } from './tokens.js';
import { approvedCallback, loginOptions, loginRequest, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider } from './testing/provider.js';

const ISSUER = 'https://login.service.test';
const AUDIENCE = 'https://api.merchant.test';

/** A JWKS server whose key set (or error status) the test changes, counting the fetches. */
async function jwksServer(
  status = 200,
): Promise<{ url: string; keys: JWK[]; fetches: () => number; stop(): Promise<void> }> {
  let fetches = 0;
  const keys: JWK[] = [];
  const server: Server = createServer((_req, res) => {
    fetches++;
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(status === 200 ? { keys } : { error: 'upstream down' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    keys,
    fetches: () => fetches,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function keyPair(
  kid: string,
): Promise<{ publicJwk: JWK; sign: (claims?: Record<string, unknown>) => Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  return {
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
    sign: (claims = {}) =>
      new SignJWT({ sub: 'svcid:0xabc', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey),
  };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (stops.length) await stops.pop()!();
});

function verifier(jwksUri: string, cooldownMs: number): TokenVerifier {
  return new TokenVerifier({
    issuer: ISSUER,
    jwksUri,
    clientId: 'merchant',
    audience: AUDIENCE,
    algorithm: 'RS256',
    clockToleranceSeconds: 30,
    jwksCooldownMs: cooldownMs,
    fetch: undefined,
  });
}

describe('the login JWKS', () => {
  it('is refetched when a token names an unknown kid (a key rotation), and the new key is used', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    const old = await keyPair('k1');
    const rotated = await keyPair('k2');
    jwks.keys.push(old.publicJwk);
    const v = verifier(jwks.url, 0);
    await v.jwks.reload();
    expect((await v.verifyAccessToken(await old.sign())).userId).toBe('0xabc');
    expect(jwks.fetches()).toBe(1); // cached
    jwks.keys.push(rotated.publicJwk);
    expect((await v.verifyAccessToken(await rotated.sign())).userId).toBe('0xabc');
    expect(jwks.fetches()).toBe(2);
  });

  it('is not refetched again for unknown kids within the cooldown', async () => {
    const jwks = await jwksServer();
    stops.push(jwks.stop);
    const known = await keyPair('k1');
    jwks.keys.push(known.publicJwk);
    const v = verifier(jwks.url, 60_000);
    await v.jwks.reload();
    for (const kid of ['x1', 'x2', 'x3']) {
      const stranger = await keyPair(kid);
      expect((await refusal(v.verifyAccessToken(await stranger.sign()))).code).toBe('token_invalid');
    }
    expect(jwks.fetches()).toBe(1);
  });

  it('answers jwks_unavailable (503) when the keys cannot be fetched', async () => {
    const jwks = await jwksServer();
    const key = await keyPair('k1');
    await jwks.stop();
    const error = await refusal(verifier(jwks.url, 0).verifyAccessToken(await key.sign()));
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
  });

  it('answers jwks_unavailable (503), not token_invalid, when the JWKS server answers an error status', async () => {
    const jwks = await jwksServer(503);
    stops.push(jwks.stop);
    const key = await keyPair('k1');
    const error = await refusal(verifier(jwks.url, 0).verifyAccessToken(await key.sign()));
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
    expect(jwks.fetches()).toBe(1);
  });

  it('answers 503 jwks_unavailable on API routes and on the callback when the JWKS answers 503 once the cache is stale', async () => {
    const provider = await startTestProvider({ redirectUris: [REDIRECT_URI], accessTokenTtl: 3600, idTokenTtl: 3600 });
    stops.push(provider.stop);
    let later = 0;
    let passAfterExchange = false;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + later);
    const login = await createLogin(
      loginOptions(provider, {
        fetch: async (input, init) => {
          const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
          if (later > 0 && url.endsWith('/.well-known/jwks.json'))
            return new Response('upstream down', { status: 503 });
          const response = await fetch(input, init);
          // The code lives 60 s, so it is exchanged in real time; then 11 minutes pass: jose's JWKS cache (10
          // minutes) is stale when the ID token is verified, the tokens (1 hour) are not.
          if (passAfterExchange && url.endsWith('/oauth2/token')) later = 11 * 60_000;
          return response;
        },
      }),
    );
    const { tokens } = await login.finish((await approvedCallback(login)).callback);
    const pending = await approvedCallback(login);
    const routes = new LoginRoutes(login, { onError: () => {} });

    later = 11 * 60_000;
    const api = await routes.user(
      loginRequest('/api/me', [], { authorization: `Bearer ${tokens.accessToken}` }),
      undefined,
    );
    expect(api).toMatchObject({ status: 503 });
    expect(JSON.parse((api as { body: string }).body)).toMatchObject({ error: 'jwks_unavailable' });

    later = 0;
    passAfterExchange = true;
    const callback = await routes.callback(pending.callback, undefined);
    expect(later).toBeGreaterThan(0); // the code was exchanged
    expect(callback.status).toBe(503);
    expect(JSON.parse(callback.body!)).toMatchObject({ error: 'jwks_unavailable' });
  });

  it('is fetched once at start-up by createLogin and then served from the cache', async () => {
    const provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
    stops.push(provider.stop);
    const fetched: string[] = [];
    const counting: typeof fetch = (input, init) => {
      fetched.push(new URL(typeof input === 'string' || input instanceof URL ? input : input.url).pathname);
      return fetch(input, init);
    };
    const login = await createLogin(loginOptions(provider, { fetch: counting }));
    expect(fetched.filter((p) => p.endsWith('/jwks.json'))).toHaveLength(1);
    await login.finish((await approvedCallback(login)).callback);
    expect(fetched.filter((p) => p.endsWith('/jwks.json'))).toHaveLength(1);
    expect(fetched[0]).toBe('/.well-known/openid-configuration');
  });
});
