import { KybLoginError } from './errors.js';
import type { TransactionStore } from './transaction-store.js';

/**
 * Options of {@link createLogin}: the service's OAuth client (spec 2.1) and how this app keeps the login state.
 *
 * @example
 * ```ts
 * const options: LoginOptions = {
 *   authUrl: 'https://login.service.example',
 *   clientId: process.env.KYB_CLIENT_ID!,
 *   clientSecret: process.env.KYB_CLIENT_SECRET || undefined, // unset: a public client (PKCE alone)
 *   redirectUri: 'https://shop.example/auth/callback',
 *   audience: 'https://api.shop.example',
 *   secret: process.env.LOGIN_COOKIE_SECRET!, // 32+ random bytes
 * }
 * ```
 */
export interface LoginOptions {
  /**
   * `{auth_url}`: the login server's issuer. Discovery starts from it, and its document must name the same issuer,
   * exactly, except that at a bare origin a trailing slash is no difference (`https://login.example[/]`).
   */
  authUrl: string;
  /** The oauth2ClientID. */
  clientId: string;
  /**
   * The client secret of a confidential client, sent with HTTP Basic on the token endpoint (spec 5.1). Leave it out
   * for a public client, which exchanges the code with PKCE alone.
   */
  clientSecret?: string;
  /**
   * The redirect URI exactly as registered (an absolute URL, recommended), or a path (such as `/auth/callback`)
   * resolved against the request's origin, which honours X-Forwarded-Proto/Host only with `trustProxy`.
   */
  redirectUri: string;
  /** One of the client's registered audiences: sent as `audience`, and required in access tokens' `aud`. */
  audience: string;
  /**
   * At least 32 bytes (e.g. `openssl rand -base64 32`), from which the keys that encrypt the transaction and session
   * cookies are derived. To rotate it without signing everybody out, pass a list, the new secret first: the first
   * seals, every one opens; drop the old one once the sessions it sealed have expired (`session.maxAgeSeconds`). Replacing
   * it outright signs everybody out and voids logins in progress.
   */
  secret: string | readonly string[];
  /** Ask for the `business` scope (business login, spec 4.1). Default false. */
  business?: boolean;
  /** The ID token signing algorithm, pinned; the token's header is never trusted for it. Default 'RS256'. */
  idTokenAlgorithm?: 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
  /** Leeway for `exp`, `iat` and `nbf`, in seconds, 0 to 60. Default 30. */
  clockToleranceSeconds?: number;
  /** Least time between two JWKS refetches caused by an unknown `kid`, in ms. Default 30 000. */
  jwksCooldownMs?: number;
  /** How long a started login may take before its callback is refused, in seconds. Default 600. */
  transactionTtlSeconds?: number;
  /** Keep transactions in a store instead of the encrypted cookie (the cookie then holds only an id). */
  transactionStore?: TransactionStore;
  /**
   * The signed-in session cookie set by the login routes; `false` to keep sessions yourself in `onLogin`.
   * `maxAgeSeconds` is from 60 to 34 560 000 (400 days, the longest a browser keeps a cookie); default 28 800 (8 h).
   */
  session?: false | { maxAgeSeconds?: number };
  /**
   * Cookie attributes; `secure` defaults to whether the redirect URI is https (and cannot be false with an https
   * one). `transactionName` is the prefix of the transaction cookies' names (each login's cookie adds a tag of its
   * state); it cannot start with `__Host-` (they are on the callback path, not /). Names with `__Secure-`/`__Host-`
   * need Secure cookies, and `sessionName` must start with `__Host-` whenever the cookies are Secure (the default is
   * `__Host-kyb-login-session`, `kyb-login-session` without Secure). The binding cookie is always
   * `__Host-kyb-login-bind` (`kyb-login-bind` without Secure). The other attributes are fixed: httpOnly, SameSite=Lax,
   * no Domain.
   */
  cookies?: { secure?: boolean; transactionName?: string; sessionName?: string };
  /**
   * Called once per successful sign-in with the user id; resolve `true` when the id was seen for the first time
   * (a sign-up: spec 1.2). Its answer becomes `isNewUser`. Without it `isNewUser` is undefined.
   */
  upsertUser?: (userId: string, claims: Record<string, unknown>) => boolean | Promise<boolean>;
  /** Honour X-Forwarded-Proto and X-Forwarded-Host when resolving a path redirect URI. Default false. */
  trustProxy?: boolean;
  /**
   * Allow http:// for the login server. Only for a local test provider: never set it in production, where it would
   * let a network attacker see codes and tokens.
   */
  allowInsecureRequests?: boolean;
  /** The fetch used for discovery, the token endpoint and the JWKS (proxies, test doubles). Default: global fetch. */
  fetch?: typeof fetch;
  /** Timeout of each request to the login server, in seconds. Default 30. */
  timeoutSeconds?: number;
}

const KNOWN: Record<keyof LoginOptions, true> = {
  authUrl: true,
  clientId: true,
  clientSecret: true,
  redirectUri: true,
  audience: true,
  secret: true,
  business: true,
  idTokenAlgorithm: true,
  clockToleranceSeconds: true,
  jwksCooldownMs: true,
  transactionTtlSeconds: true,
  transactionStore: true,
  session: true,
  cookies: true,
  upsertUser: true,
  trustProxy: true,
  allowInsecureRequests: true,
  fetch: true,
  timeoutSeconds: true,
};
// Names other OIDC libraries use, so a migrating user is told the option meant.
const ALIASES: Record<string, keyof LoginOptions> = {
  issuer: 'authUrl',
  issuerUrl: 'authUrl',
  authURL: 'authUrl',
  auth_url: 'authUrl',
  client_id: 'clientId',
  client_secret: 'clientSecret',
  redirect_uri: 'redirectUri',
  redirectUrl: 'redirectUri',
  callbackUrl: 'redirectUri',
  cookieSecret: 'secret',
  sessionSecret: 'secret',
  audiences: 'audience',
  clockTolerance: 'clockToleranceSeconds',
};
const SESSION_KNOWN = ['maxAgeSeconds'];
const SESSION_ALIASES: Record<string, string> = {
  maxAge: 'maxAgeSeconds',
  maxAgeSecs: 'maxAgeSeconds',
  ttl: 'maxAgeSeconds',
  ttlSeconds: 'maxAgeSeconds',
  expiresIn: 'maxAgeSeconds',
  lifetime: 'maxAgeSeconds',
  duration: 'maxAgeSeconds',
};
const COOKIES_KNOWN = ['secure', 'transactionName', 'sessionName'];
const COOKIES_ALIASES: Record<string, string> = {
  name: 'sessionName',
  cookieName: 'sessionName',
  sessionCookieName: 'sessionName',
  sessionCookie: 'sessionName',
  transactionCookieName: 'transactionName',
  transactionCookie: 'transactionName',
  txName: 'transactionName',
  stateName: 'transactionName',
};
// Cookie attributes other libraries let you set, which this one fixes on purpose.
const COOKIES_FIXED = ['sameSite', 'domain', 'path', 'httpOnly', 'maxAge', 'expires', 'partitioned', 'priority'];
/** The longest Max-Age browsers keep (RFC 6265bis caps it at 400 days); a longer session would end earlier anyway. */
const MAX_SESSION_SECONDS = 400 * 24 * 3600;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const EXAMPLE =
  "createLogin({ authUrl: 'https://login.service.example', clientId, clientSecret, redirectUri: 'https://shop.example/auth/callback', audience: 'https://api.shop.example', secret: process.env.LOGIN_COOKIE_SECRET })";

/**
 * Checks every option and throws one `config_invalid` error listing all problems and their fixes. Values are never
 * repeated in the message: several options are secrets.
 */
export function validateLoginOptions(options: unknown): asserts options is LoginOptions {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) {
    throw configInvalid([`options must be an object, got ${options === null ? 'null' : typeof options}.`]);
  }
  const o = options as Record<string, unknown>;
  for (const name of Object.keys(o)) {
    if (name in KNOWN) continue;
    const meant = ALIASES[name];
    problems.push(meant ? `unknown option "${name}": did you mean "${meant}"?` : `unknown option "${name}".`);
  }
  checkUrls(o, problems);
  checkValues(o, problems);
  checkSession(o.session, problems);
  // Schemes as the URL parser reads them (`HTTP://` is http), never as raw strings; undefined for a path or junk.
  checkCookies(o.cookies, protocolOf(o.redirectUri), problems);
  if (problems.length > 0) throw configInvalid(problems);
}

/** authUrl and redirectUri: URLs, and over https except where plain http cannot be read by others. */
function checkUrls(o: Record<string, unknown>, problems: string[]): void {
  // isRedirect: redirectUri, which may be a path, and must not have a query or fragment.
  const url = (name: string, value: unknown, isRedirect: boolean): void => {
    if (typeof value !== 'string' || value === '') return void problems.push(`${name} is required: a URL string.`);
    // URL parsers drop surrounding spaces and inner tabs and line breaks, so the checks below would pass a value
    // that is sent to the login server as written (a redirect_uri it does not know), or that starts with a space
    // and escapes every check on its scheme.
    // eslint-disable-next-line no-control-regex
    if (/[\s\u0000-\u001f\u007f]/.test(value)) {
      return void problems.push(
        `${name} must not contain spaces, tabs or line breaks (at its ends either): remove them, e.g. from the environment variable it is read from.`,
      );
    }
    const suffix = isRedirect ? redirectUriSuffixProblem(name, value) : undefined;
    if (suffix) problems.push(suffix);
    if (isRedirect && value.startsWith('/') && !value.startsWith('//')) return;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      return void problems.push(`${name} must be an absolute URL${isRedirect ? ' or a path starting with /' : ''}.`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') problems.push(`${name} must be an http(s) URL.`);
    if (!isRedirect && parsed.hash) problems.push(`${name} must not have a #fragment.`);
  };
  url('authUrl', o.authUrl, false);
  url('redirectUri', o.redirectUri, true);
  if (protocolOf(o.redirectUri) === 'http:' && !LOOPBACK_HOSTS.has(new URL(o.redirectUri as string).hostname)) {
    problems.push(
      'redirectUri must be https, or http on a loopback host only (localhost, 127.0.0.1, [::1]): over plain http the ' +
        'authorization code and the session cookie cross the network in clear text. Register and use the https URL.',
    );
  }
  if (protocolOf(o.authUrl) === 'http:' && o.allowInsecureRequests !== true) {
    problems.push(
      'authUrl must be https. For a local test provider on http://127.0.0.1 set allowInsecureRequests: true (never in production).',
    );
  }
  if (typeof o.authUrl === 'string' && /\/\.well-known\//.test(o.authUrl)) {
    problems.push(
      'authUrl must be the issuer ({auth_url}), not the discovery document URL: drop the /.well-known/… part.',
    );
  }
}

/**
 * Why a redirect URI cannot be repeated exactly in the token request, as the login server requires (RFC 6749 4.1.3),
 * or undefined. openid-client builds the token request's redirect_uri from the callback URL without its query and
 * fragment, so with either (even an empty `?` or `#`) every code exchange would be refused with invalid_grant.
 */
export function redirectUriSuffixProblem(name: string, value: string): string | undefined {
  if (value.includes('#')) return `${name} must not have a #fragment.`;
  if (!value.includes('?')) return undefined;
  return (
    `${name} must not have a ?query: the token request must repeat the redirect URI exactly, and the OIDC library ` +
    '(openid-client) drops the query from it, so the login server would refuse every sign-in (invalid_grant). ' +
    'Register and use a redirect URI without a query; carry what the query held in returnTo.'
  );
}

/**
 * The cookie secret: a string of at least 32 bytes, or a rotation (a non-empty list of such strings, the current one
 * first, each once). Messages never repeat a secret.
 */
function checkSecret(secret: unknown, problems: string[]): void {
  const generate = '(e.g. `openssl rand -base64 32`)';
  if (Array.isArray(secret)) {
    if (secret.length === 0) problems.push(`secret is an empty list: give at least one secret ${generate}.`);
    secret.forEach((each: unknown, i) => {
      if (typeof each !== 'string' || new TextEncoder().encode(each).length < 32)
        problems.push(`secret[${i}] must be a string of at least 32 bytes ${generate}.`);
    });
    if (new Set(secret).size !== secret.length) problems.push('secret lists the same secret twice: list each once.');
    return;
  }
  if (typeof secret !== 'string')
    problems.push(`secret is required: a string of at least 32 bytes ${generate}, or a list of them to rotate it.`);
  else if (new TextEncoder().encode(secret).length < 32)
    problems.push(`secret must be at least 32 bytes long ${generate}.`);
}

/** The client's identity and secrets, the numbers, and the options that are a flag, a function or a store. */
function checkValues(o: Record<string, unknown>, problems: string[]): void {
  for (const name of ['clientId', 'audience'] as const) {
    if (typeof o[name] !== 'string' || o[name] === '') problems.push(`${name} is required: a non-empty string.`);
  }
  if (o.clientSecret !== undefined && (typeof o.clientSecret !== 'string' || o.clientSecret === '')) {
    problems.push('clientSecret must be a non-empty string, or left out for a public client.');
  }
  checkSecret(o.secret, problems);
  const number = (name: string, min: number, max: number): void => {
    const v = o[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max)) {
      problems.push(`${name} must be a number from ${min} to ${max}.`);
    }
  };
  number('clockToleranceSeconds', 0, 60);
  number('jwksCooldownMs', 0, 3_600_000);
  number('transactionTtlSeconds', 30, 3600);
  number('timeoutSeconds', 1, 300);
  if (
    o.idTokenAlgorithm !== undefined &&
    !['RS256', 'PS256', 'ES256', 'EdDSA'].includes(o.idTokenAlgorithm as string)
  ) {
    problems.push(
      "idTokenAlgorithm must be one of 'RS256' (the service's), 'PS256', 'ES256', 'EdDSA'; never 'none' or an HMAC algorithm.",
    );
  }
  for (const name of ['business', 'trustProxy', 'allowInsecureRequests'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'boolean') problems.push(`${name} must be true or false.`);
  }
  for (const name of ['upsertUser', 'fetch'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') problems.push(`${name} must be a function.`);
  }
  const store = o.transactionStore as Record<string, unknown> | undefined;
  if (
    store !== undefined &&
    (typeof store !== 'object' || store === null || typeof store.set !== 'function' || typeof store.take !== 'function')
  ) {
    problems.push(
      'transactionStore must have set(id, transaction, ttlSeconds) and take(id) methods (see memoryTransactionStore).',
    );
  }
}

function checkSession(value: unknown, problems: string[]): void {
  const session = value as Record<string, unknown> | false | undefined;
  if (session === undefined || session === false) return;
  if (typeof session !== 'object' || session === null || Array.isArray(session))
    return void problems.push('session must be false or { maxAgeSeconds }.');
  for (const name of Object.keys(session))
    if (!SESSION_KNOWN.includes(name)) problems.push(unknownNested('session', name, SESSION_KNOWN, SESSION_ALIASES));
  const v = session.maxAgeSeconds;
  if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 60 && v <= MAX_SESSION_SECONDS)) {
    problems.push(
      `session.maxAgeSeconds must be a number of seconds from 60 to ${MAX_SESSION_SECONDS} (400 days, the longest a browser keeps a cookie), e.g. 28800 for 8 hours.`,
    );
  }
}

/** The cookies option; `redirectProtocol` is the redirect URI's scheme, undefined for a path. */
function checkCookies(value: unknown, redirectProtocol: string | undefined, problems: string[]): void {
  const cookies = value as Record<string, unknown> | undefined;
  if (cookies === undefined) return;
  if (typeof cookies !== 'object' || cookies === null || Array.isArray(cookies))
    return void problems.push('cookies must be an object.');
  for (const name of Object.keys(cookies)) {
    if (COOKIES_KNOWN.includes(name)) continue;
    if (COOKIES_FIXED.some((fixed) => fixed.toLowerCase() === name.toLowerCase())) {
      problems.push(
        `cookies.${name} is not an option: the login's cookies are always httpOnly, SameSite=Lax (the callback is a top-level GET ` +
          'from the login server), without Domain (this host only), the session on / and the transaction on the callback path; ' +
          'set the session lifetime with session.maxAgeSeconds. Remove it.',
      );
    } else problems.push(unknownNested('cookies', name, COOKIES_KNOWN, COOKIES_ALIASES));
  }
  if (cookies.secure !== undefined && typeof cookies.secure !== 'boolean')
    problems.push('cookies.secure must be true or false.');
  if (cookies.secure === false && redirectProtocol === 'https:') {
    problems.push(
      'cookies.secure: false with an https redirectUri would let the browser send the session cookie over plain http too, ' +
        'where anyone on the network reads it: remove cookies.secure (it follows the redirect URI\u2019s scheme).',
    );
  }
  // Whether the cookies are Secure, when it is known here (a path redirectUri decides per request).
  const secure =
    typeof cookies.secure === 'boolean'
      ? cookies.secure
      : redirectProtocol === undefined
        ? undefined
        : redirectProtocol === 'https:';
  for (const name of ['transactionName', 'sessionName']) {
    const problem = cookieNameProblem(name, cookies[name], secure);
    if (problem) problems.push(problem);
  }
}

/** What is wrong with `cookies.transactionName` or `cookies.sessionName`, given whether the cookies are Secure. */
function cookieNameProblem(name: string, v: unknown, secure: boolean | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(v))
    return `cookies.${name} must be a cookie name (token characters only).`;
  // Browsers match the prefixes case-insensitively (RFC 6265bis 5.6), and drop a cookie that breaks their rules.
  if (name === 'transactionName' && /^__host-/i.test(v)) {
    return (
      'cookies.transactionName must not start with __Host-: browsers refuse a __Host- cookie on a path other than /, and ' +
      'the transaction cookies are on the callback path, so no sign-in would finish. Use a __Secure- name, or leave ' +
      'it out (the default is __Secure-kyb-login-tx over https).'
    );
  }
  if (name === 'sessionName' && secure !== false && !/^__host-/i.test(v)) return sessionNameWithoutHostPrefix(secure);
  if (secure === false && /^__(secure|host)-/i.test(v)) {
    return (
      `cookies.${name} starts with ${v.slice(0, v.indexOf('-') + 1)}, which browsers accept only on Secure cookies, and these are not ` +
      '(an http redirectUri, or cookies.secure: false): drop the prefix, or use https.'
    );
  }
  return undefined;
}

/**
 * Why a Secure session cookie needs the `__Host-` prefix, and the fix. The session cookie is always Secure, on `/` and
 * without Domain when the cookies are Secure, so the prefix costs nothing; without it a sibling subdomain, or a plain
 * http page of this host, can set a cookie of that name (cookie tossing), planting its own session in the user's
 * browser. There is no opt-out: no setting of this package makes the prefix impossible.
 */
function sessionNameWithoutHostPrefix(secure: boolean | undefined): string {
  const when =
    secure === true ? 'the cookies are Secure' : 'the cookies are Secure on https requests (a path redirectUri)';
  return (
    `cookies.sessionName must start with __Host- when ${when}: only a __Host- cookie cannot be set by a sibling subdomain ` +
    'or a plain-http page of this host, which could otherwise plant its own session in the browser. Use ' +
    '__Host-<your name>, or leave it out (the default is __Host-kyb-login-session)' +
    (secure === true
      ? '.'
      : '; for plain-http loopback development only, cookies.secure: false allows a name without it.')
  );
}

/** The scheme of an absolute URL option as the URL parser reads it (`'https:'`), or undefined (a path, not a URL). */
function protocolOf(value: unknown): string | undefined {
  return typeof value === 'string' && URL.canParse(value) ? new URL(value).protocol : undefined;
}

/** A nested option that does not exist, with the one meant when it can be guessed (as route-options does). */
function unknownNested(parent: string, name: string, known: string[], aliases: Record<string, string>): string {
  const normalize = (value: string): string => value.toLowerCase().replace(/[-_\s]/g, '');
  const wanted = normalize(name);
  let meant =
    Object.entries(aliases).find(([alias]) => normalize(alias) === wanted)?.[1] ??
    known.find((option) => normalize(option) === wanted);
  if (!meant) {
    const alike = known.filter((option) => wanted.length >= 3 && normalize(option).startsWith(wanted.slice(0, 3)));
    if (alike.length === 1) meant = alike[0];
  }
  return meant
    ? `unknown option "${parent}.${name}": did you mean "${parent}.${meant}"?`
    : `unknown option "${parent}.${name}"; the options of ${parent} are ${known.join(', ')}.`;
}

function configInvalid(problems: string[]): KybLoginError {
  return new KybLoginError(
    'config_invalid',
    `Invalid createLogin options:\n- ${problems.join('\n- ')}\nExample: ${EXAMPLE}`,
  );
}
