/**
 * A whole sign-in through an app's own login routes, over HTTP, as a browser does it: the app's start route, the
 * provider's login and consent pages, the app's callback, then the app's redirects to the page the user lands on.
 */
import { approveAtProvider, UserAgent } from './user-agent.js';

/**
 * One request of the sign-in, as the browser made it. `url` and `location` can hold the code and state: show their
 * paths, never the whole URL.
 *
 * @example
 * ```ts
 * for (const step of result.steps) console.log(step.method, step.url.pathname, step.status, step.location?.pathname ?? '')
 * ```
 */
export interface SignInStep {
  /** `app` for the app's routes, `provider` for the login server's pages (all of them folded into one step). */
  at: 'app' | 'provider';
  method: string;
  url: URL;
  /** The app's answer; absent for the provider's step, which is several requests. */
  status?: number;
  location?: URL;
}

/**
 * What the browser saw: each step, and the page it landed on after the callback.
 *
 * @example
 * ```ts
 * const { landed, agent } = await signInThroughApp(`${origin}/auth/login?returnTo=/account`)
 * expect(landed.status).toBe(200)
 * ```
 */
export interface SignInResult {
  steps: SignInStep[];
  /** The last answer of the app, once it stopped redirecting. */
  landed: { url: URL; status: number; body: string };
  /** The browser, holding the app's session cookie: use it for further requests as the signed-in user. */
  agent: UserAgent;
}

/**
 * Signs in through the app's start route (e.g. `https://shop.example/auth/login?returnTo=/account`): the start route
 * must redirect to the login server, which is then approved as `address` (the test provider's login and consent
 * forms); the app's callback and its redirects are followed within the app's origin. Throws with the status and the
 * start of the body when a step answers something a sign-in does not.
 *
 * @example
 * ```ts
 * const provider = await startLoginProvider({ redirectUris: [`${origin}/auth/callback`] })
 * // … the app with createLogin({ authUrl: provider.issuer, … }) listening on origin …
 * const { landed } = await signInThroughApp(`${origin}/auth/login?returnTo=/account`)
 * ```
 */
export async function signInThroughApp(
  startUrl: string | URL,
  options: { address?: string; agent?: UserAgent } = {},
): Promise<SignInResult> {
  const agent = options.agent ?? new UserAgent();
  const appOrigin = new URL(startUrl).origin;
  const steps: SignInStep[] = [];
  let url = new URL(startUrl);
  const start = await agent.request(url);
  const toProvider = redirectOf(start, url);
  await start.body?.cancel();
  if (!toProvider || toProvider.origin === appOrigin)
    throw new Error(`the start route answered ${start.status} instead of a redirect to the login server`);
  steps.push({ at: 'app', method: 'GET', url, status: start.status, location: toProvider });

  url = await approveAtProvider(agent, toProvider, options.address);
  steps.push({ at: 'provider', method: 'GET', url: toProvider, location: url });
  if (url.origin !== appOrigin)
    throw new Error(`the login server sent the browser to ${url.origin}, not back to the app on ${appOrigin}`);

  for (let hops = 0; hops < 10; hops++) {
    const response = await agent.request(url);
    const next = redirectOf(response, url);
    if (!next || next.origin !== appOrigin) {
      const body = await response.text();
      steps.push({ at: 'app', method: 'GET', url, status: response.status, ...(next ? { location: next } : {}) });
      if (response.status >= 400) throw new Error(`${url.pathname} answered ${response.status}: ${body.slice(0, 300)}`);
      return { steps, landed: { url, status: response.status, body }, agent };
    }
    await response.body?.cancel();
    steps.push({ at: 'app', method: 'GET', url, status: response.status, location: next });
    url = next;
  }
  throw new Error('the app redirected more than 10 times after the callback');
}

function redirectOf(response: Response, base: URL): URL | undefined {
  const location = response.headers.get('location');
  return response.status >= 300 && response.status < 400 && location ? new URL(location, base) : undefined;
}
