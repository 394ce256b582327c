/**
 * Test helper: a minimal browser over fetch. It keeps cookies by name (every server of a test is on 127.0.0.1, and a
 * browser shares cookies across the ports of one host too), follows nothing by itself, and drives the test
 * provider's login and consent forms the way a user would.
 */
import { TEST_ADDRESS } from './provider.js';

/**
 * The minimal browser: cookies by name, no automatic redirects (so every hop can be checked).
 *
 * @example
 * ```ts
 * const agent = new UserAgent()
 * const start = await agent.request(`${appOrigin}/auth/login`) // 302 to the provider; the transaction cookie kept
 * ```
 */
export class UserAgent {
  readonly cookies = new Map<string, string>();

  /** One request with the cookies held so far (`form` is sent urlencoded); remembers the Set-Cookie it gets back. */
  async request(
    url: string | URL,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookie) headers.set('cookie', cookie);
    let body: string | undefined;
    if (init.form) {
      headers.set('content-type', 'application/x-www-form-urlencoded');
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) this.store(line);
    return response;
  }

  private store(line: string): void {
    const [pair, ...attributes] = line.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    const expired = attributes.some((a) => {
      const [key, v] = a.trim().split('=');
      if (key!.toLowerCase() === 'max-age') return Number(v) <= 0;
      if (key!.toLowerCase() === 'expires') return Date.parse(v!) <= Date.now();
      return false;
    });
    if (expired || value === '') this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

/**
 * From an authorization URL, sign in at the test provider as `address` and approve consent; returns the URL the
 * provider sends the browser back to (the app's redirect_uri with code and state), without requesting it.
 *
 * @example
 * ```ts
 * const callbackUrl = await approveAtProvider(agent, start.headers.get('location')!)
 * await agent.request(callbackUrl) // the app's callback: 303 to returnTo with the session cookie
 * ```
 */
export async function approveAtProvider(
  agent: UserAgent,
  authorizationUrl: string | URL,
  address = TEST_ADDRESS,
): Promise<URL> {
  let url = new URL(authorizationUrl);
  for (let hops = 0; hops < 20; hops++) {
    const response = await agent.request(url);
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      await response.body?.cancel();
      if (next.origin !== new URL(authorizationUrl).origin) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`provider page without a form: ${html.slice(0, 300)}`);
    const posted = await agent.request(new URL(action, url), {
      method: 'POST',
      form: action.endsWith('/login') ? { address } : {},
    });
    const after = posted.headers.get('location');
    await posted.body?.cancel();
    if (!after) throw new Error(`provider form answered ${posted.status} without a redirect`);
    url = new URL(after, url);
    if (url.origin !== new URL(authorizationUrl).origin) return url;
  }
  throw new Error('too many redirects at the provider');
}
