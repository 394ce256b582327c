/**
 * Where a request's login comes back to: the redirect URI (a configured path is resolved against the request's
 * origin), and whether the login's cookies are Secure, which follows that URI's scheme unless `cookies.secure` says.
 */
import type { LoginContext } from './context.js';
import { KybLoginError, loginError } from './errors.js';
import type { LoginRequest } from './types.js';

/** The hosts on which a plain-http redirect URI stays on the machine (as for an absolute one, options.ts). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The redirect URI of a request: the configured one, or the configured path on the request's origin. A path that
 * resolves to plain http on a host other than loopback is refused, as an absolute http redirect URI is at creation:
 * the code would cross the network in clear text, and cookies without Secure lose their `__Host-` prefix, so a
 * sibling subdomain could plant its own login in the browser (login CSRF). That is what a TLS-terminating proxy
 * without `trustProxy` looks like.
 */
export function redirectUriFor(ctx: LoginContext, request: LoginRequest): string {
  const { redirectUri, trustProxy } = ctx.options;
  if (!redirectUri.startsWith('/')) return redirectUri;
  const resolved = new URL(redirectUri, requestOrigin(request, trustProxy === true));
  if (resolved.protocol === 'http:' && !LOOPBACK_HOSTS.has(resolved.hostname)) {
    throw new KybLoginError(
      'config_invalid',
      'the path redirectUri resolves to plain http on a host that is not loopback for this request. Behind a proxy ' +
        'that terminates TLS, set trustProxy: true (it then reads X-Forwarded-Proto and X-Forwarded-Host); otherwise ' +
        'serve the site over https or set an absolute https redirectUri (http: only on localhost, 127.0.0.1, [::1]).',
    );
  }
  return resolved.href;
}

/**
 * Whether the cookies set for a request are Secure. `cookies.secure: false` with an https redirect URI is refused: for
 * an absolute one at creation, for a path here, once the request's scheme is known (non-Secure cookies on an https
 * site would be sent over plain http too).
 */
export function secureFor(ctx: LoginContext, request: LoginRequest): boolean {
  const configured = ctx.options.cookies?.secure;
  if (configured === true) return true;
  const https = new URL(redirectUriFor(ctx, request)).protocol === 'https:';
  if (configured === false && https) {
    throw new KybLoginError(
      'config_invalid',
      'cookies.secure: false, but the path redirectUri resolves to https for this request, so the session cookie could ' +
        'be sent over plain http too: remove cookies.secure (it follows the redirect URI\u2019s scheme).',
    );
  }
  return https;
}

/**
 * The origin of a request; proxy headers are believed only with trustProxy (first value of each). A Host that is no
 * host name (`shop_example.com`, a bad port, none at all) is what the client or a proxy sent, not a misconfiguration:
 * 400 host_invalid, whose detail names the header and the way around it.
 */
function requestOrigin(request: LoginRequest, trustProxy: boolean): string {
  const first = (name: string): string | undefined => request.header(name)?.split(',')[0]?.trim() || undefined;
  const forwardedProto = trustProxy ? first('x-forwarded-proto')?.toLowerCase() : undefined;
  const proto = forwardedProto ?? (request.encrypted ? 'https' : 'http');
  const forwardedHost = trustProxy ? first('x-forwarded-host') : undefined;
  const header = forwardedHost === undefined ? 'Host' : 'X-Forwarded-Host';
  const host = forwardedHost ?? request.header('host')?.trim();
  const fix = 'the path redirectUri is resolved against it (an absolute redirectUri does not read it)';
  if (proto !== 'http' && proto !== 'https')
    throw loginError('host_invalid', `X-Forwarded-Proto is neither http nor https; ${fix}`);
  if (!host) throw loginError('host_invalid', `the request has no Host header; ${fix}`);
  // Letters, digits, dots, hyphens, an IPv6 literal and a port only: no userinfo, path or underscore can ride along.
  if (/^[A-Za-z0-9.\-:[\]]+$/.test(host) && URL.canParse(`${proto}://${host}/`))
    return new URL(`${proto}://${host}/`).origin;
  throw loginError('host_invalid', `the ${header} header is not a host name; ${fix}`);
}
