import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover } from './discovery.js';
import { LOGIN_ERRORS } from './errors.js';
import { createLogin } from './login.js';
import { approvedCallback, loginOptions, REDIRECT_URI, refusal } from './testing/flow.js';
import { startTestProvider, type TestProvider } from './testing/provider.js';
import { claimsOf, craftToken, tamperingFetch } from './testing/tokens.js';

// The discovery document at start-up: what createLogin refuses, with the code, message and detail an operator sees.

let provider: TestProvider;
let providerDocument: Record<string, unknown>;
beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [REDIRECT_URI] });
  providerDocument = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
});
afterAll(() => provider?.stop());

/** Runs `run` with the origin of a server on 127.0.0.1 that answers every request with `handle`. */
async function withServer(
  handle: (origin: string, req: IncomingMessage, res: ServerResponse) => void,
  run: (origin: string) => Promise<void>,
): Promise<void> {
  const server = createServer((req, res) => handle(origin(), req, res));
  const origin = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(origin());
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A server answering the provider's discovery document with `change` applied, at any path. */
function documentServer(change: (origin: string) => Record<string, unknown>) {
  return (origin: string, _req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ...providerDocument, issuer: origin, ...change(origin) }));
  };
}

describe('a discovery document is refused with discovery_failed (503)', () => {
  it.each(['jwks_uri', 'token_endpoint', 'authorization_endpoint'])('when it lacks %s', async (field) => {
    await withServer(
      documentServer(() => ({ [field]: undefined })),
      async (origin) => {
        expect(await refusal(createLogin(loginOptions(provider, { authUrl: origin })))).toMatchObject({
          code: 'discovery_failed',
          status: 503,
          message: LOGIN_ERRORS.discovery_failed.message,
          detail: 'the discovery document lacks jwks_uri, token_endpoint or authorization_endpoint',
        });
      },
    );
  });

  it('when the server answers an error status, naming the failure', async () => {
    await withServer(
      (_origin, _req, res) => void res.writeHead(500).end('oops'),
      async (origin) => {
        expect(await refusal(createLogin(loginOptions(provider, { authUrl: origin })))).toMatchObject({
          code: 'discovery_failed',
          status: 503,
          message:
            'The discovery document at authUrl could not be fetched or read (OAUTH_RESPONSE_IS_NOT_CONFORM); check authUrl and the network.',
          detail: 'OAUTH_RESPONSE_IS_NOT_CONFORM',
        });
      },
    );
  });

  it('when the server cannot be reached, naming the failure by its class', async () => {
    expect(await refusal(createLogin(loginOptions(provider, { authUrl: 'http://127.0.0.1:9' })))).toMatchObject({
      code: 'discovery_failed',
      message:
        'The discovery document at authUrl could not be fetched or read (TypeError); check authUrl and the network.',
      detail: 'an error',
    });
  });
});

describe('the issuer of the discovery document', () => {
  it('is accepted when it is exactly authUrl with a path (control)', async () => {
    await withServer(
      documentServer((origin) => ({ issuer: `${origin}/tenant` })),
      async (origin) => {
        const login = await createLogin(loginOptions(provider, { authUrl: `${origin}/tenant` }));
        expect(login.issuer).toBe(`${origin}/tenant`);
      },
    );
  });

  it('is refused when it differs from authUrl, with what to set in the message', async () => {
    await withServer(
      documentServer((origin) => ({ issuer: `${origin}/tenant/` })),
      async (origin) => {
        expect(await refusal(createLogin(loginOptions(provider, { authUrl: `${origin}/tenant` })))).toMatchObject({
          code: 'issuer_mismatch',
          status: 503,
          message:
            'The discovery document at authUrl names a different issuer. Set authUrl to exactly the issuer the login server ' +
            'announces (a trailing slash counts, except after a bare origin: https://login.example and https://login.example/ ' +
            'are one issuer); tokens are only accepted from that issuer.',
          detail: 'discovery issuer differs from authUrl',
        });
      },
    );
  });

  it('is refused at a root issuer when authUrl spells its scheme in capitals', async () => {
    await withServer(
      documentServer((origin) => ({ issuer: `${origin}/` })),
      async (origin) => {
        const authUrl = origin.replace('http:', 'HTTP:');
        expect(await refusal(createLogin(loginOptions(provider, { authUrl })))).toMatchObject({
          code: 'issuer_mismatch',
        });
      },
    );
  });
});

describe('an https authUrl', () => {
  const ISSUER = 'https://login.service.test';
  /** A fetch answering the provider's document for ISSUER (with `change`), and everything else from the provider. */
  const fetchAnswering =
    (requested: string[], change: Record<string, string> = {}): typeof fetch =>
    async (input) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      requested.push(url.href);
      if (url.pathname === '/.well-known/openid-configuration')
        return Response.json({
          ...providerDocument,
          issuer: ISSUER,
          authorization_endpoint: `${ISSUER}/oauth2/auth`,
          token_endpoint: `${ISSUER}/oauth2/token`,
          jwks_uri: `${ISSUER}/.well-known/jwks.json`,
          ...change,
        });
      return fetch(`${provider.issuer}${url.pathname}`);
    };

  it('is discovered without allowInsecureRequests (through the configured fetch)', async () => {
    const requested: string[] = [];
    const login = await createLogin(
      loginOptions(provider, { authUrl: ISSUER, allowInsecureRequests: false, fetch: fetchAnswering(requested) }),
    );
    expect(login.issuer).toBe(ISSUER);
    expect(requested).toEqual([`${ISSUER}/.well-known/openid-configuration`, `${ISSUER}/.well-known/jwks.json`]);
  });

  it.each([
    ['jwks_uri', 'http://login.service.test/.well-known/jwks.json'],
    ['jwks_uri', 'http://127.0.0.1:9/.well-known/jwks.json'],
    ['token_endpoint', 'http://login.service.test/oauth2/token'],
    ['authorization_endpoint', 'http://login.service.test/oauth2/auth'],
  ])(
    'refuses a document whose %s is plain http (%s): discovery_failed, before any key is fetched',
    async (field, url) => {
      const requested: string[] = [];
      const options = {
        authUrl: ISSUER,
        allowInsecureRequests: false,
        fetch: fetchAnswering(requested, { [field]: url }),
      };
      const error = await refusal(createLogin(loginOptions(provider, options)));
      expect(error).toMatchObject({
        code: 'discovery_failed',
        status: 503,
        detail: `not https in the discovery document: ${field}`,
      });
      expect(error.message).toMatch(
        /names endpoints that are not https .*allowInsecureRequests: true only for a local test provider/,
      );
      expect(requested).toEqual([`${ISSUER}/.well-known/openid-configuration`]);
    },
  );

  it('accepts plain http endpoints with allowInsecureRequests (a local test provider)', async () => {
    const requested: string[] = [];
    const jwksUri = `${provider.issuer}/.well-known/jwks.json`;
    const options = {
      authUrl: ISSUER,
      allowInsecureRequests: true,
      fetch: fetchAnswering(requested, { jwks_uri: jwksUri }),
    };
    expect((await createLogin(loginOptions(provider, options))).issuer).toBe(ISSUER);
  });
});

describe('an http authUrl without allowInsecureRequests', () => {
  it('is refused by discovery as config_invalid, with the fix in the message', async () => {
    const error = await refusal(
      discover(loginOptions(provider, { allowInsecureRequests: false }), {
        idTokenAlgorithm: 'RS256',
        clockToleranceSeconds: 30,
        timeoutSeconds: 5,
      }),
    );
    expect(error).toMatchObject({
      code: 'config_invalid',
      status: 500,
      message: 'authUrl must be https (allowInsecureRequests: true only for a local test provider).',
    });
  });
});

describe('the client settings given to discovery', () => {
  it('clockToleranceSeconds is the leeway of the ID token check of the token response too', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expiredBy45s = tamperingFetch(async (body) => ({
      ...body,
      id_token: await craftToken(provider.signingKey, { ...claimsOf(body.id_token), iat: now - 600, exp: now - 45 }),
    }));
    const lenient = await createLogin(loginOptions(provider, { clockToleranceSeconds: 60, fetch: expiredBy45s }));
    expect((await lenient.finish((await approvedCallback(lenient)).callback)).userId).toMatch(/^0x/);
    const strict = await createLogin(loginOptions(provider, { clockToleranceSeconds: 30, fetch: expiredBy45s }));
    expect((await refusal(strict.finish((await approvedCallback(strict)).callback))).code).toBe('token_expired');
  });
});
