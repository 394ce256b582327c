/**
 * Test fixture: panva's oidc-provider on 127.0.0.1, configured like the service's login server (spec 1, 2.1, 2.2,
 * 4.1): the spec's routes (`/oauth2/auth`, `/oauth2/token`, `/.well-known/jwks.json`), `sub` = `svcid:0x…`, PKCE
 * S256 required for every client, `audience` (checked against the client's registered audiences) and `access_type`
 * accepted, consent on every login, refresh tokens with offline_access, JWT access tokens for the audience, a
 * confidential client (client_secret_basic) and a public client. Its login and consent pages are plain HTML forms,
 * so a test can drive them over HTTP and a browser can click through them.
 *
 * Published as `@kyb-webhooks/login/testing` (`startLoginProvider`) for the examples' demo and merchants' own tests;
 * oidc-provider is then an optional peer dependency. Never a login server for production: it approves whatever
 * address its login form is given.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { errors, type ClientMetadata, type Configuration } from 'oidc-provider';

/**
 * What differs between the tests' providers.
 *
 * @example
 * ```ts
 * const options: TestProviderOptions = { redirectUris: ['http://127.0.0.1:3000/auth/callback'], accessTokenTtl: 60 }
 * ```
 */
export interface TestProviderOptions {
  /** Redirect URIs registered for both clients. */
  redirectUris: string[];
  /** Audiences registered for both clients (default ['https://api.merchant.test']). */
  audiences?: string[];
  /** Seconds an access token lives (default 600). */
  accessTokenTtl?: number;
  /** Seconds an ID token lives (default 600). */
  idTokenTtl?: number;
  /** The port on 127.0.0.1 to listen on (default 0: a free port). The issuer names it. */
  port?: number;
}

/**
 * A running provider; `stop()` closes it.
 *
 * @example
 * ```ts
 * const provider: TestProvider = await startTestProvider({ redirectUris })
 * const login = await createLogin({ authUrl: provider.issuer, clientId: provider.confidentialClient.clientId, … })
 * await provider.stop()
 * ```
 */
export interface TestProvider {
  issuer: string;
  /** Origin of the server (no path). */
  origin: string;
  confidentialClient: { clientId: string; clientSecret: string };
  publicClient: { clientId: string };
  audiences: string[];
  /** The private signing key (RS256) the provider signs ID and access tokens with, for crafting refused tokens. */
  signingKey: JWK;
  /** Body of the last token endpoint request and its Authorization header, to check what the client sent. */
  lastTokenRequest: { authorization: string | undefined; form: URLSearchParams } | undefined;
  stop(): Promise<void>;
}

/**
 * The address every test user signs in with unless it asks for another; the user id is this address.
 *
 * @example
 * ```ts
 * expect(result.userId).toBe(TEST_ADDRESS)
 * ```
 */
export const TEST_ADDRESS = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';

/**
 * Starts the provider on a free port of 127.0.0.1. The issuer is its origin (`http://127.0.0.1:<port>`), so a login
 * needs `allowInsecureRequests: true` for it.
 *
 * @example
 * ```ts
 * const provider = await startTestProvider({ redirectUris: [`${appOrigin}/auth/callback`] })
 * ```
 */
export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = {
    ...(await exportJWK(privateKey)),
    kid: `login-${randomBytes(4).toString('hex')}`,
    alg: 'RS256',
    use: 'sig',
  };
  const audiences = options.audiences ?? ['https://api.merchant.test'];
  const confidentialClient = { clientId: 'merchant-backend', clientSecret: randomBytes(24).toString('base64url') };
  const publicClient = { clientId: 'merchant-spa' };

  // Listen first: the issuer contains the port.
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = origin;

  const clientBase = {
    redirect_uris: options.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    audiences,
  } as Omit<ClientMetadata, 'client_id'>;
  const configuration: Configuration = {
    clients: [
      {
        ...clientBase,
        client_id: confidentialClient.clientId,
        client_secret: confidentialClient.clientSecret,
        token_endpoint_auth_method: 'client_secret_basic',
      },
      { ...clientBase, client_id: publicClient.clientId, token_endpoint_auth_method: 'none' },
    ],
    jwks: { keys: [signingKey] },
    routes: { authorization: '/oauth2/auth', token: '/oauth2/token', jwks: '/.well-known/jwks.json' },
    scopes: ['openid', 'offline', 'offline_access', 'business'],
    claims: { openid: ['sub'] },
    extraClientMetadata: { properties: ['audiences'] },
    extraParams: {
      // The service requires one of the client's registered audiences (spec 4.1).
      audience(ctx, value, client) {
        const registered = (client as unknown as { audiences?: string[] }).audiences ?? [];
        if (!value || !registered.includes(value))
          throw new errors.InvalidRequest('audience must be one of the client\u2019s audiences');
      },
      access_type(_ctx, value) {
        if (value !== undefined && value !== 'offline') throw new errors.InvalidRequest('access_type must be offline');
      },
    },
    pkce: { required: () => true },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    ttl: {
      AccessToken: options.accessTokenTtl ?? 600,
      AuthorizationCode: 60,
      IdToken: options.idTokenTtl ?? 600,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
    },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // The service names the API by `audience`; resource indicators are how oidc-provider sets a token's aud.
        defaultResource: (ctx) => (ctx.oidc.params?.audience as string | undefined) ?? audiences[0]!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!audiences.includes(resource)) throw new errors.InvalidTarget();
          return {
            scope: 'openid offline offline_access business',
            audience: resource,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    issueRefreshToken: (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>error</title><p id="error">${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p>`;
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  const fixture: TestProvider = {
    issuer,
    origin,
    confidentialClient,
    publicClient,
    audiences,
    signingKey,
    lastTokenRequest: undefined,
    stop: () => stopServer(server),
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    if (path.startsWith('/interaction/')) {
      interaction(provider, req, res, path).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String((error as Error).message));
      });
      return;
    }
    if (path === '/oauth2/token' && req.method === 'POST') {
      // Record what the client sent (tests check HTTP Basic and the form), then hand the same bytes on.
      readBody(req).then(
        (body) => {
          fixture.lastTokenRequest = {
            authorization: req.headers.authorization,
            form: new URLSearchParams(body.toString('utf8')),
          };
          const replay = Object.assign(Readable.from([body]), {
            headers: req.headers,
            method: req.method,
            url: req.url,
          });
          callback(replay as unknown as IncomingMessage, res);
        },
        () => res.destroy(),
      );
      return;
    }
    callback(req, res);
  });
  return fixture;
}

/** The login page stands in for the QR page: the "wallet" is a form field with the address that approves. */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const [, , uid, action] = path.split('/');
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('interaction mismatch');
  if (req.method === 'GET') {
    const page =
      details.prompt.name === 'login'
        ? form(
            `/interaction/${uid}/login`,
            'Approve in wallet',
            `<input name="address" id="address" value="${TEST_ADDRESS}">`,
          )
        : form(
            `/interaction/${uid}/consent`,
            'Allow',
            `<p id="scopes">${escapeHtml(String(details.params.scope))}</p>`,
          );
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
    return;
  }
  const body = new URLSearchParams((await readBody(req)).toString('utf8'));
  if (action === 'login') {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: `svcid:${body.get('address') ?? TEST_ADDRESS}` } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const { prompt, params, session, grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session!.accountId, clientId: params.client_id as string });
  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant!.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant!.addResourceScope(indicator, scopes.join(' '));
  await provider.interactionFinished(
    req,
    res,
    { consent: { grantId: await grant!.save() } },
    { mergeWithLastSubmission: true },
  );
}

function form(action: string, button: string, fields: string): string {
  return `<!doctype html><title>login</title><form method="post" action="${action}">${fields}<button id="submit" type="submit">${button}</button></form>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
