/**
 * Where a request's login comes back to: the redirect URI (a configured path is resolved against the request's
 * origin), and whether the login's cookies are Secure, which follows that URI's scheme unless `cookies.secure` says.
 */
import type { LoginContext } from './context.js';
import { KybLoginError, loginError } from './errors.js';
import type { LoginRequest } from './types.js';

/** The redirect URI of a request: the configured one, or the configured path on the request's origin. */
export function redirectUriFor(ctx: LoginContext, request: LoginRequest): string {
  const { redirectUri, trustProxy } = ctx.options;
  if (!redirectUri.startsWith('/')) return redirectUri;
  return new URL(redirectUri, requestOrigin(request, trustProxy === true)).href;
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
