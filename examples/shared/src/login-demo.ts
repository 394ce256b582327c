import { randomBytes } from 'node:crypto';
import { createReceiver } from '@kyb-webhooks/core';
import {
  LOGIN_TEST_ADDRESS,
  signInThroughApp,
  startLoginProvider,
  UserAgent,
  type LoginProvider,
  type SignInStep,
} from '@kyb-webhooks/login/testing';
import { randomSecret } from '@kyb-webhooks/testing';
import type { ServedLoginApp, ServeWithLogin } from './listen-then-mount.js';
import { loginFromEnv, userIdOnPage, type ExampleLogin } from './login.js';

/** One line of the login demo's table. */
export interface LoginDemoRow {
  request: string;
  /** The app's answer; null for the login server's pages. */
  status: number | null;
  what: string;
}

/** What the login demo saw: the table, and the user id the account page showed (undefined when it showed none). */
export interface LoginDemoResult {
  rows: LoginDemoRow[];
  userId: string | undefined;
}

/**
 * The README's login demo for one framework (`npm run demo -- login`, `npm run demo -- koa login`): starts the local
 * login server (oidc-provider, configured like the service) and the example app configured through the same
 * environment variables as `pnpm start`, then signs in over HTTP as a browser would: the home page's link, the
 * login server's wallet and consent pages, the callback, the account page with the user id; then signs out. Prints
 * a table and the user id. No code, state or token is printed: only paths.
 *
 * @example
 * ```ts
 * const { userId } = await runLoginDemo('Express', serveAppWithLogin)
 * ```
 */
export async function runLoginDemo(
  framework: string,
  serve: ServeWithLogin,
  options: { address?: string; print?: (text: string) => void } = {},
): Promise<LoginDemoResult> {
  const print = options.print ?? console.log;
  const address = options.address ?? LOGIN_TEST_ADDRESS;
  const appLog: string[] = [];
  let provider: LoginProvider | undefined;
  const loginFor = async (origin: string): Promise<ExampleLogin> => {
    provider = await startLoginProvider({ redirectUris: [`${origin}/auth/callback`] });
    const env = {
      KYB_AUTH_URL: provider.issuer,
      KYB_CLIENT_ID: provider.confidentialClient.clientId,
      KYB_CLIENT_SECRET: provider.confidentialClient.clientSecret,
      KYB_REDIRECT_URI: `${origin}/auth/callback`,
      KYB_LOGIN_AUDIENCE: provider.audiences[0]!,
      LOGIN_COOKIE_SECRET: randomBytes(32).toString('base64'),
    };
    return (await loginFromEnv(env, (line) => appLog.push(line)))!;
  };
  // The webhook route is mounted as always; this demo does not deliver to it.
  const receiver = createReceiver({ secrets: { '1': randomSecret() } });
  let app: ServedLoginApp | undefined;
  try {
    app = await serve(receiver, loginFor);
    const server = provider!;
    print(
      `${framework} example on ${app.origin}; the login server is a local oidc-provider on ${server.origin}, configured like the service's.\n`,
    );

    const rows: LoginDemoRow[] = [];
    const agent = new UserAgent();
    const home = await agent.request(`${app.origin}/`);
    const link = /<a id="sign-in" href="([^"]+)"/.exec(await home.text())?.[1];
    rows.push({
      request: 'GET  /',
      status: home.status,
      what: link ? 'home page with "Sign in with the service"' : 'home page without a sign-in link',
    });
    if (!link) throw new Error(`the home page of the ${framework} example has no sign-in link (status ${home.status})`);

    const signIn = await signInThroughApp(new URL(link.replaceAll('&amp;', '&'), app.origin), { address, agent });
    for (const step of signIn.steps) rows.push(describeStep(step, server, appLog, address));
    const userId = userIdOnPage(signIn.landed.body);

    const logout = await agent.request(`${app.origin}/auth/logout`, { method: 'POST', form: {} }); // as the page's form posts it
    await logout.body?.cancel();
    rows.push({
      request: 'POST /auth/logout',
      status: logout.status,
      what: logout.status === 303 ? `session cookie cleared${arrow(logout)}` : 'not signed out',
    });
    const after = await agent.request(`${app.origin}/account`);
    const refusal = (await after.json().catch(() => ({}))) as { error?: string };
    rows.push({
      request: 'GET  /account',
      status: after.status,
      what: after.status === 401 ? `signed out: ${refusal.error ?? 'refused'}` : 'still signed in',
    });

    print(formatLoginTable(rows));
    print(userId ? `\nuser id: ${userId}` : '\nThe account page showed no user id: see the table above.');
    return { rows, userId };
  } finally {
    await app?.close();
    await provider?.stop();
  }
}

function describeStep(step: SignInStep, provider: LoginProvider, appLog: string[], address: string): LoginDemoRow {
  const path = step.url.pathname + (step.url.pathname === '/auth/login' ? step.url.search : '');
  const request = `${step.method.padEnd(4)} ${path}`;
  if (step.at === 'provider') {
    return {
      request: '     login server',
      status: null,
      what: `wallet approval as ${address.slice(0, 10)}…, consent; back to ${step.location?.pathname} with a code`,
    };
  }
  if (step.location && step.location.origin === provider.origin) {
    const sent = step.location.searchParams;
    const checks = [
      sent.get('code_challenge_method') === 'S256' && sent.has('code_challenge') ? 'PKCE S256' : 'NO PKCE',
      sent.has('state') ? 'state' : 'NO state',
      sent.has('nonce') ? 'nonce' : 'NO nonce',
      sent.get('prompt') === 'consent' ? 'prompt=consent' : 'NO prompt=consent',
      sent.get('access_type') === 'offline' ? 'access_type=offline' : 'NO access_type',
      sent.has('audience') ? 'audience' : 'NO audience',
    ];
    return {
      request,
      status: step.status ?? null,
      what: `to the login server's ${step.location.pathname}: ${checks.join(', ')}`,
    };
  }
  if (step.location) {
    const basic = provider.lastTokenRequest?.authorization?.startsWith('Basic ') ? 'HTTP Basic' : 'NOT HTTP Basic';
    const user = appLog.find((line) => /^signed (up|in):/.test(line));
    return {
      request,
      status: step.status ?? null,
      what: `code exchanged (${basic}), ID token verified, ${user ?? 'no sign-in logged'}${arrow(step)}`,
    };
  }
  return {
    request,
    status: step.status ?? null,
    what: step.status === 200 ? 'the account page with the user id' : 'not the account page',
  };
}

function arrow(answer: { location?: URL | undefined; headers?: Headers }): string {
  const location = answer.location?.pathname ?? answer.headers?.get('location') ?? undefined;
  return location ? `; to ${location}` : '';
}

function formatLoginTable(rows: LoginDemoRow[]): string {
  const width = Math.max(...rows.map((row) => row.request.length), 'request'.length) + 2;
  const lines = [`${'request'.padEnd(width)}status  what happened`];
  for (const row of rows) lines.push(`${row.request.padEnd(width)}${String(row.status ?? '').padEnd(8)}${row.what}`);
  return lines.join('\n');
}
