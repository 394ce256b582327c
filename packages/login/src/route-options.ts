import { KybLoginError } from './errors.js';
import { safeReturnPath } from './return-path.js';

/**
 * The arguments of the route helpers (`loginHandlers`, `requireUser`, `new LoginRoutes`), checked when they are
 * called, so a misspelt option fails at start-up with `config_invalid` instead of being ignored. One spec per helper,
 * shared by the four framework mounts. Like createLogin's checks, messages name options and kinds, never values.
 */

/** What is wrong with a present option, as words after its name, or undefined. */
type Rule = (value: unknown) => string | undefined;

interface HelperSpec {
  /** The helper as the user calls it, e.g. `requireUser`. */
  helper: string;
  options: Record<string, Rule>;
  /** Other libraries' names for an option, for "did you mean". */
  aliases: Record<string, string>;
  example: string;
  /** What is wrong with the options together (one option that needs another), or undefined. */
  together?: (options: Record<string, unknown>) => string | undefined;
}

const isFunction: Rule = (value) =>
  typeof value === 'function' ? undefined : `must be a function, got ${kindOf(value)}.`;
const isBoolean: Rule = (value) =>
  typeof value === 'boolean' ? undefined : `must be true or false, got ${kindOf(value)}.`;

const ROUTES_OPTIONS = { onLogin: isFunction, onError: isFunction };
const ROUTES_ALIASES = {
  onSuccess: 'onLogin',
  onSignIn: 'onLogin',
  onSignin: 'onLogin',
  onFailure: 'onError',
  onFail: 'onError',
};

const LOGIN_HANDLERS: HelperSpec = {
  helper: 'loginHandlers',
  options: ROUTES_OPTIONS,
  aliases: ROUTES_ALIASES,
  example:
    'loginHandlers(login, { onLogin: async ({ userId, isNewUser }) => { … }, onError: (error) => log(error.code, error.detail) })',
};
// The paths of Koa's loginRoutes: each a plain path (no query), as the router compares it with ctx.path.
const ROUTE_NAMES = ['start', 'callback', 'logout'];
const isPaths: Rule = (value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `must be an object, got ${kindOf(value)}.`;
  for (const [name, path] of Object.entries(value)) {
    if (!ROUTE_NAMES.includes(name)) return `has no route \`${name}\`; its routes are ${ROUTE_NAMES.join(', ')}.`;
    if (path !== undefined && (typeof path !== 'string' || safeReturnPath(path) !== path || /[?#]/.test(path))) {
      return `\`${name}\` must be a path such as '/auth/${name === 'start' ? 'login' : name}', without query, got ${kindOf(path)}.`;
    }
  }
  return undefined;
};

const LOGIN_ROUTER: HelperSpec = {
  helper: 'loginRoutes',
  options: { ...ROUTES_OPTIONS, paths: isPaths },
  aliases: { ...ROUTES_ALIASES, routes: 'paths', prefix: 'paths' },
  example: "loginRoutes(login, { paths: { start: '/auth/login', logout: '/auth/logout' }, onLogin, onError })",
};
const LOGIN_ROUTES: HelperSpec = {
  ...LOGIN_HANDLERS,
  helper: 'new LoginRoutes',
  example: 'new LoginRoutes(login, { onLogin, onError })',
};
// A path of this site, as the start route's returnTo takes them (the login routes are mounted on this app).
const isPath: Rule = (value) =>
  typeof value === 'string' && safeReturnPath(value) !== undefined
    ? undefined
    : `must be a path on this site such as '/auth/login', got ${kindOf(value)}.`;

const REQUIRE_USER: HelperSpec = {
  helper: 'requireUser',
  options: { session: isBoolean, redirectToLogin: isPath, onError: isFunction },
  aliases: {
    sessions: 'session',
    cookie: 'session',
    allowSession: 'session',
    onFailure: 'onError',
    redirect: 'redirectToLogin',
    loginPath: 'redirectToLogin',
    loginUrl: 'redirectToLogin',
    redirectTo: 'redirectToLogin',
    loginRedirect: 'redirectToLogin',
  },
  example: "requireUser(login, { session: true, redirectToLogin: '/auth/login' })",
  // Without the session, the user would come back from signing in to the same refusal, and be sent again, forever.
  together: (options) =>
    options.redirectToLogin !== undefined && options.session !== true
      ? '`redirectToLogin` needs `session: true`: the sign-in it leads to sets the session cookie, which this guard would not accept.'
      : undefined,
};

// What the route layer calls on a Login: anything without these is not one.
const LOGIN_METHODS = [
  'start',
  'finish',
  'clearTransactionCookie',
  'verifyAccessToken',
  'sessionCookie',
  'clearSessionCookie',
  'sessionUser',
];

/** The framework mount a helper was called from, named in messages (`@kyb-webhooks/login/express`). */
export type Mount = 'express' | 'fastify' | 'koa' | 'hono';

/** Throws `config_invalid` unless `login` is a Login and `options` are loginHandlers options. */
export function checkLoginHandlersArguments(mount: Mount, login: unknown, options: unknown): void {
  check(LOGIN_HANDLERS, mount, login, options);
}

/** Throws `config_invalid` unless `login` is a Login and `options` are loginRoutes options. */
export function checkLoginRouterArguments(mount: Mount, login: unknown, options: unknown): void {
  check(LOGIN_ROUTER, mount, login, options);
}

/** Throws `config_invalid` unless `login` is a Login and `options` are requireUser options. */
export function checkRequireUserArguments(mount: Mount, login: unknown, options: unknown): void {
  check(REQUIRE_USER, mount, login, options);
}

/** Throws `config_invalid` unless `login` is a Login and `options` are LoginRoutes options. */
export function checkLoginRoutesArguments(login: unknown, options: unknown): void {
  check(LOGIN_ROUTES, undefined, login, options);
}

function check(spec: HelperSpec, mount: Mount | undefined, login: unknown, options: unknown): void {
  const problems: string[] = [];
  const loginProblem = checkLogin(login);
  if (loginProblem) problems.push(`\`login\` ${loginProblem}`);
  if (options !== undefined) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      problems.push(`\`options\` must be an object, got ${kindOf(options)}.`);
    } else {
      for (const [name, value] of Object.entries(options)) {
        const rule = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
        if (!rule) problems.push(`\`${name}\` ${unknownOption(name, spec)}`);
        else if (value !== undefined) {
          const problem = rule(value);
          if (problem) problems.push(`\`${name}\` ${problem}`);
        }
      }
      const together = spec.together?.(options as Record<string, unknown>);
      if (together) problems.push(together);
    }
  }
  if (problems.length === 0) return;
  const owner = mount ? `${spec.helper} (@kyb-webhooks/login/${mount})` : spec.helper;
  throw new KybLoginError(
    'config_invalid',
    `Invalid ${owner} arguments:\n- ${problems.join('\n- ')}\nExample: ${spec.example}`,
  );
}

function checkLogin(login: unknown): string | undefined {
  const fix = 'pass the login that `await createLogin(options)` resolves to.';
  if (login === undefined || login === null) return `is missing: ${fix}`;
  if (typeof (login as { then?: unknown }).then === 'function') return `is a Promise (missing await?): ${fix}`;
  if (typeof login !== 'object') return `must be a Login, got ${kindOf(login)}: ${fix}`;
  if ('authUrl' in login || 'clientId' in login) return `is createLogin's options, not a Login: ${fix}`;
  const missing = LOGIN_METHODS.filter((name) => typeof (login as Record<string, unknown>)[name] !== 'function');
  return missing.length > 0 ? `is not a Login (it has no ${missing.join(', ')}): ${fix}` : undefined;
}

function unknownOption(name: string, spec: HelperSpec): string {
  const meant = suggestOption(name, Object.keys(spec.options), spec.aliases);
  if (meant) return `is not an option of ${spec.helper}: did you mean \`${meant}\`?`;
  return `is not an option of ${spec.helper}; its options are ${Object.keys(spec.options).join(', ')}.`;
}

/**
 * An alias, the same name in another case or spelling (`onlogin`, `on_login`), or the one option that begins like it
 * (`sesion` → `session`). The helpers have two or three options each, so no edit distance is needed to guess the one
 * meant.
 */
function suggestOption(name: string, known: readonly string[], aliases: Record<string, string>): string | undefined {
  const wanted = normalize(name);
  for (const [alias, target] of Object.entries(aliases)) if (normalize(alias) === wanted) return target;
  const same = known.find((option) => normalize(option) === wanted);
  if (same) return same;
  const alike = known.filter((option) => wanted.length >= 3 && normalize(option).startsWith(wanted.slice(0, 3)));
  return alike.length === 1 ? alike[0] : undefined;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** A value's kind for a message, never its content (an option may hold a secret). */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
