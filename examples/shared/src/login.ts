import { createLogin, type KybLoginError, type Login, type LoginResult } from '@kyb-webhooks/login';
import { port } from './config.js';

/**
 * The environment "Sign in with the service" reads, with what each variable is: the error for a missing one names
 * it and says where its value comes from.
 */
export const LOGIN_ENV = {
  KYB_AUTH_URL: 'the login server, {auth_url} (the issuer), e.g. https://login.service.example',
  KYB_CLIENT_ID: 'the oauth2ClientID from the dashboard',
  KYB_CLIENT_SECRET: 'the client secret from the dashboard',
  KYB_REDIRECT_URI: 'a redirect URI registered for the client, e.g. http://127.0.0.1:3000/auth/callback',
  KYB_LOGIN_AUDIENCE: 'one of the client\u2019s registered audiences',
  LOGIN_COOKIE_SECRET: '32+ random bytes that encrypt the login cookies: openssl rand -base64 32',
} as const;

/** A variable of {@link LOGIN_ENV}. */
export type LoginEnvName = keyof typeof LOGIN_ENV;

/** The login of an example app: the login, where its callback route goes, and the routes' hooks. */
export interface ExampleLogin {
  login: Login;
  /** The path of KYB_REDIRECT_URI: the callback route is mounted there. */
  callbackPath: string;
  /** For loginHandlers: logs each sign-in (the user id only) and each refusal (its code and check, never a value). */
  hooks: { onLogin: (result: LoginResult) => void; onError: (error: KybLoginError) => void };
}

/**
 * "Sign in with the service" for the example apps, from the environment (see {@link LOGIN_ENV}). Off (undefined) when
 * none of the variables is set, so the webhook part runs alone; once any is set, a missing one rejects with an error
 * naming each missing variable. `createLogin` runs discovery and fetches the login JWKS, so an unreachable or
 * misnamed login server stops the app at start-up too. An http:// login server is accepted only on this machine
 * (127.0.0.1, localhost): the local provider of the demo.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv().catch(exitWith)
 * const app = createApp(receiver, login)
 * ```
 */
export async function loginFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = console.log,
): Promise<ExampleLogin | undefined> {
  const names = Object.keys(LOGIN_ENV) as LoginEnvName[];
  if (!names.some((name) => env[name])) return undefined;
  const missing = names.filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new Error(
      `Sign in with the service is half configured. Set ${missing.map((name) => `${name} (${LOGIN_ENV[name]})`).join(', ')}; or unset every KYB login variable to run the webhooks alone.`,
    );
  }
  const value = (name: LoginEnvName) => env[name] as string;
  const authUrl = value('KYB_AUTH_URL');
  const redirectUri = value('KYB_REDIRECT_URI');
  const known = new Set<string>(); // the example's user store: the user ids seen since the app started
  const login = await createLogin({
    authUrl,
    clientId: value('KYB_CLIENT_ID'),
    clientSecret: value('KYB_CLIENT_SECRET'),
    redirectUri,
    audience: value('KYB_LOGIN_AUDIENCE'),
    secret: value('LOGIN_COOKIE_SECRET'),
    allowInsecureRequests: isLoopbackHttp(authUrl),
    upsertUser: (userId) => {
      const isNew = !known.has(userId);
      known.add(userId);
      return isNew;
    },
  });
  return {
    login,
    callbackPath: new URL(redirectUri, 'http://localhost').pathname,
    hooks: {
      onLogin: ({ userId, isNewUser }) => log(`${isNewUser ? 'signed up' : 'signed in'}: ${userId}`),
      onError: (error) => log(`sign-in refused: ${error.code}${error.detail ? ` (${error.detail})` : ''}`),
    },
  };
}

function isLoopbackHttp(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url);
    return protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
  } catch {
    return false; // createLogin names the malformed URL
  }
}

/**
 * Stops the app with the error's message on stderr and exit code 1: for start-up errors a user fixes in the
 * environment, where a stack trace would only hide the message.
 *
 * @example
 * ```ts
 * const login = await loginFromEnv().catch(exitWith)
 * ```
 */
export function exitWith(error: unknown): never {
  console.error(error instanceof Error ? error.message : String(error));
  if ((error as { code?: unknown } | null)?.code === 'EADDRINUSE') {
    console.error(
      `Port ${port} is taken by another server: stop it, or start this one on another port, e.g. PORT=3001.`,
    );
  }
  process.exit(1);
}

/**
 * The value of `start()`, or {@link exitWith} its error: for the synchronous start-up steps (the receiver from the
 * environment), so a missing variable prints its message instead of a stack trace.
 *
 * @example
 * ```ts
 * const { receiver } = orExit(() => receiverFromEnv())
 * ```
 */
export function orExit<T>(start: () => T): T {
  try {
    return start();
  } catch (error) {
    return exitWith(error);
  }
}

/** Where the example's pages send the browser: the start route with the page to come back to. */
export const SIGN_IN_PATH = '/auth/login?returnTo=/account';

/**
 * The example's home page: the "Sign in with the service" link.
 *
 * @example
 * ```ts
 * app.get('/', (_req, res) => res.type('html').send(homePage()))
 * ```
 */
export function homePage(): string {
  return page('Example shop', `<p><a id="sign-in" href="${SIGN_IN_PATH}">Sign in with the service</a></p>`);
}

/**
 * The page a signed-in user sees: the user id (the address of their `svcid:` subject) and a sign-out button.
 *
 * @example
 * ```ts
 * app.get('/account', requireUser(login, { session: true }), (req, res) => res.type('html').send(accountPage(req.kybUser!.userId)))
 * ```
 */
export function accountPage(userId: string): string {
  return page(
    'Your account',
    `<p>Signed in as <output id="user-id">${escapeHtml(userId)}</output></p>` +
      '<form method="post" action="/auth/logout"><button type="submit">Sign out</button></form>',
  );
}

/**
 * The user id an {@link accountPage} shows, or undefined.
 *
 * @example
 * ```ts
 * const userId = userIdOnPage(await (await fetch(`${origin}/account`, { headers: { cookie } })).text())
 * ```
 */
export function userIdOnPage(html: string): string | undefined {
  return /<output id="user-id">([^<]*)<\/output>/.exec(html)?.[1];
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><h1>${title}</h1>${body}</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
