/**
 * The app the login conformance suite runs against, and what its groups of cases share: {@link startApp} puts the
 * framework's routes on a server of their own beside a local provider, and {@link ConformanceSuite} holds the running
 * app with the steps of a sign-in that most cases begin with.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { KybLoginError } from '../../errors.js';
import { createLogin, type Login, type LoginResult } from '../../login.js';
import type { LoginRoutesOptions } from '../../routes.js';
import { COOKIE_SECRET } from '../flow.js';
import { startTestProvider, type TestProvider } from '../provider.js';
import { claimsOf, tamperingFetch } from '../tokens.js';
import { approveAtProvider, UserAgent } from '../user-agent.js';

/** What the suite hands the framework: the login, and the hooks to pass to loginHandlers. */
export type MountApp = (server: Server, login: Login, hooks: LoginRoutesOptions<unknown>) => Promise<void> | void;

/** A running app on 127.0.0.1 with its own provider, as the browser test uses it too. */
export interface RunningApp {
  origin: string;
  provider: TestProvider;
  login: Login;
  logins: LoginResult[];
  errors: KybLoginError[];
  /** What onLogin returns next (a path to go to instead of returnTo), when set. */
  nextLoginRedirect: { value: string | undefined };
  /** When set, the ID token of the next token responses is replaced by the one it makes from the genuine claims. */
  forgeIdToken: { value: ((claims: Record<string, unknown>) => Promise<string>) | undefined };
  stop(): Promise<void>;
}

/** Listens first (the redirect URI holds the port), then starts the provider and the login, then mounts the app. */
export async function startApp(mount: MountApp): Promise<RunningApp> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await startTestProvider({ redirectUris: [`${origin}/auth/callback`] });
  const logins: LoginResult[] = [];
  const errors: KybLoginError[] = [];
  const nextLoginRedirect: { value: string | undefined } = { value: undefined };
  const forgeIdToken: RunningApp['forgeIdToken'] = { value: undefined };
  const known = new Set<string>();
  const login = await createLogin({
    authUrl: provider.issuer,
    clientId: provider.confidentialClient.clientId,
    clientSecret: provider.confidentialClient.clientSecret,
    redirectUri: `${origin}/auth/callback`,
    audience: provider.audiences[0]!,
    secret: COOKIE_SECRET,
    allowInsecureRequests: true,
    upsertUser: (userId) => !known.has(userId) && Boolean(known.add(userId)),
    fetch: tamperingFetch(async (body) =>
      forgeIdToken.value
        ? { ...body, id_token: await forgeIdToken.value(claimsOf(body.id_token) as Record<string, unknown>) }
        : body,
    ),
  });
  await mount(server, login, {
    onLogin: (result) => {
      logins.push(result);
      return nextLoginRedirect.value;
    },
    onError: (error) => void errors.push(error),
  });
  return {
    origin,
    provider,
    login,
    logins,
    errors,
    nextLoginRedirect,
    forgeIdToken,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await provider.stop();
    },
  };
}

/**
 * One request over node:http, which (unlike fetch) sends any Host header as given; the answer's status, JSON body
 * and Set-Cookie lines.
 */
export function rawRequest(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string | undefined; body: string; setCookie: string[] }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, method, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          contentType: response.headers['content-type'],
          body,
          setCookie: response.headers['set-cookie'] ?? [],
        }),
      );
    });
    request.setTimeout(5000, () => request.destroy(new Error(`no answer to ${method} ${path} within 5 s`)));
    request.on('error', reject);
    request.end();
  });
}

/**
 * What each group of cases is given. `app` is set by the suite's beforeAll, after the cases are registered: read it
 * inside a test, never while registering one.
 */
export class ConformanceSuite {
  app!: RunningApp;

  constructor(readonly mount: MountApp) {}

  /** Through the app's start route and the provider; returns the agent and the callback URL, not yet requested. */
  async upToCallback(returnTo?: string): Promise<{ agent: UserAgent; callbackUrl: URL }> {
    const agent = new UserAgent();
    const start = await agent.request(
      `${this.app.origin}/auth/login${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`,
    );
    expect(start.status).toBe(302);
    return { agent, callbackUrl: await approveAtProvider(agent, start.headers.get('location')!) };
  }

  /** The one transaction cookie the agent holds, as [name, value]. */
  transactionCookie(agent: UserAgent): [string, string] {
    const found = [...agent.cookies].filter(([name]) => name.startsWith('kyb-login-tx'));
    expect(found).toHaveLength(1);
    return found[0]!;
  }

  async signedIn(returnTo?: string): Promise<{ agent: UserAgent; callback: Response }> {
    const { agent, callbackUrl } = await this.upToCallback(returnTo);
    return { agent, callback: await agent.request(callbackUrl) };
  }
}
