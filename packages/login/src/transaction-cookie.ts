/**
 * The login transaction in the browser: between the start route and the callback, a login's state, PKCE verifier,
 * nonce and return path live in a sealed cookie of their own (or in the transaction store, the cookie then holding
 * its id), on the callback path only. This module writes that cookie, takes it back on the callback (checked against
 * the callback's state and this browser's binding, then used up once), and clears it and the ones of abandoned logins.
 */
import * as oidc from 'openid-client';
import {
  admitPendingLogin,
  bindingCookie,
  bindingCookieName,
  bindingHash,
  bindingOf,
  bindingOrNew,
  MAX_OTHER_PENDING_LOGINS,
  MAX_PENDING_LOGINS,
  withoutPendingLogin,
} from './binding.js';
import type { LoginContext } from './context.js';
import { readCookie, readCookies, serializeCookie } from './cookies.js';
import { loginError } from './errors.js';
import { redirectUriFor, secureFor } from './redirect-uri.js';
import type { LoginTransaction } from './transaction-store.js';
import type { LoginRequest } from './types.js';

/** Used transaction ids are remembered until the transaction's expiry; bounded. */
const MAX_USED_TRANSACTIONS = 100_000;

/** The most a browser keeps of a cookie's name and value together (RFC 6265bis 5.6; Chrome and Firefox enforce it). */
const MAX_COOKIE_BYTES = 4096;

/**
 * Seals a new login's transaction into its cookie (storing it first when there is a store), and answers the
 * Set-Cookie values the start route sends: the transaction cookie, the binding cookie that lists it, and cookies that
 * clear the oldest pending logins of this browser beyond what its Cookie header can carry.
 */
export async function pendTransaction(
  ctx: LoginContext,
  request: LoginRequest,
  transaction: LoginTransaction,
): Promise<string[]> {
  const { options, transactionTtl } = ctx;
  const secure = secureFor(ctx, request);
  const binding = bindingOrNew(request, secure);
  const id = oidc.randomState();
  if (options.transactionStore) await options.transactionStore.set(id, transaction, transactionTtl);
  // With a store the cookie keeps the state too, so a callback's state is compared before the store entry is used.
  // The binding's hash, not the binding: the transaction cookie reaches a path a sibling could plant cookies on.
  const bind = await bindingHash(binding.id);
  const sealed = await ctx.transactions.seal(
    options.transactionStore ? { jti: id, state: transaction.state, bind } : { jti: id, tx: { ...transaction }, bind },
    transactionTtl,
  );
  const name = transactionCookieName(ctx, secure, transaction.state);
  // Browsers drop a cookie whose name and value pass 4096 bytes, and the login would fail only at the callback
  // (transaction_missing) after the user went through the login server: refuse it now. Only the return path varies.
  if (name.length + 1 + sealed.length > MAX_COOKIE_BYTES) {
    throw loginError(
      'return_path_invalid',
      `the transaction cookie would pass ${MAX_COOKIE_BYTES} bytes: returnTo is too long for it`,
    );
  }
  const path = transactionCookiePath(ctx, request);
  // The transaction cookies only reach the callback path, so this route cannot see them: the binding cookie lists
  // the pending ones (tag, size, start time), and the oldest beyond the count and bytes a Cookie header can carry
  // are cleared here, before they could make the callback's request too large for the server to read.
  const started = {
    tag: stateTag(transaction.state),
    bytes: name.length + 1 + sealed.length,
    issuedAt: Math.floor(Date.now() / 1000),
  };
  const stale = admitPendingLogin(binding, started, transactionTtl);
  return [
    serializeCookie(name, sealed, { path, maxAgeSeconds: transactionTtl, secure }),
    bindingCookie(binding, secure),
    ...stale.map((pending) =>
      serializeCookie(transactionCookiePrefix(ctx, secure) + pending.tag, '', { path, maxAgeSeconds: 0, secure }),
    ),
  ];
}

/**
 * The transaction of the callback's state, used up only once it is known to be this browser's: a forged callback
 * (another state) finds no cookie of that name and leaves the pending login alone.
 */
export async function takeTransaction(
  ctx: LoginContext,
  request: LoginRequest,
  state: string,
): Promise<LoginTransaction> {
  const { options } = ctx;
  const secure = secureFor(ctx, request);
  const value = readCookie(request.header('cookie'), transactionCookieName(ctx, secure, state));
  if (!value) {
    // Another login of this browser is pending: the callback is not its (another tab's stale state, or forged).
    if (transactionCookies(ctx, request, secure).length > 0)
      throw loginError('state_mismatch', 'no pending login of this browser has the callback state');
    throw loginError('transaction_missing', 'no transaction cookie on the callback');
  }
  const opened = await ctx.transactions.open(value);
  if (opened === 'expired') throw loginError('transaction_missing', 'the transaction cookie expired');
  if (opened === 'invalid') throw loginError('transaction_invalid', 'the transaction cookie did not decrypt');
  const sealed = (options.transactionStore ? opened : opened.tx) as Partial<LoginTransaction> | undefined;
  if (typeof sealed?.state !== 'string') throw loginError('transaction_invalid', 'the transaction is incomplete');
  if (sealed.state !== state) throw loginError('state_mismatch', 'the callback state is not this transaction\u2019s');
  // Checked before the transaction is used up: a planted cookie must not spend anything of this browser's.
  const binding = bindingOf(request, secure);
  if (typeof opened.bind !== 'string' || binding === undefined || opened.bind !== (await bindingHash(binding.id))) {
    throw loginError(
      'state_mismatch',
      `the transaction cookie was not started in this browser: the ${bindingCookieName(secure)} cookie is ${binding === undefined ? 'missing' : 'another'} (a transaction cookie planted from elsewhere, e.g. by a sibling subdomain, or this browser's cookies were cleared)`,
    );
  }
  const id = String(opened.jti);
  useOnce(ctx, id, (Number(opened.exp) || 0) * 1000);
  if (options.transactionStore) {
    const stored = await options.transactionStore.take(id);
    // Not used here, so expired or evicted (memoryTransactionStore drops the oldest when full), or used by
    // another instance: the user can only start again, and was not the one who replayed it.
    if (!stored)
      throw loginError(
        'transaction_missing',
        'the transaction is not in the store (expired, evicted, or used on another instance)',
      );
    return stored;
  }
  const tx = opened.tx as LoginTransaction | undefined;
  if (!tx || typeof tx.codeVerifier !== 'string')
    throw loginError('transaction_invalid', 'the transaction is incomplete');
  return tx;
}

/**
 * Single use: remember the id until the cookie would have expired anyway (with a store too, so a replay is told
 * apart from a transaction the store no longer has). Throws `transaction_replayed` for an id already used.
 */
function useOnce(ctx: LoginContext, id: string, expiresAtMs: number): void {
  const used = ctx.usedTransactions;
  const now = Date.now();
  for (const [key, expiresAt] of used) {
    if (expiresAt > now && used.size < MAX_USED_TRANSACTIONS) break;
    used.delete(key);
  }
  if (used.has(id)) throw loginError('transaction_replayed', 'this transaction cookie was already used');
  used.set(id, expiresAtMs);
}

/** The Set-Cookie value that clears the transaction cookie of the callback's `state`. */
export function clearTransactionCookie(ctx: LoginContext, request: LoginRequest): string {
  const secure = secureFor(ctx, request);
  const state = new URL(request.url, 'http://callback.invalid').searchParams.get('state') ?? '';
  return serializeCookie(transactionCookieName(ctx, secure, state), '', {
    path: transactionCookiePath(ctx, request),
    maxAgeSeconds: 0,
    secure,
  });
}

/**
 * Set-Cookie values for the callback request: the binding cookie without the callback's own login, and cookies that
 * clear the transaction cookies of abandoned logins, all but the newest few beside the callback's own.
 */
export async function callbackCleanupCookies(ctx: LoginContext, request: LoginRequest): Promise<string[]> {
  const secure = secureFor(ctx, request);
  const ownState = new URL(request.url, 'http://callback.invalid').searchParams.get('state') ?? '';
  const own = transactionCookieName(ctx, secure, ownState);
  // The callback ends its own login (its cookie is cleared, success or not): the binding cookie stops listing it.
  const finished = withoutPendingLogin(request, secure, stateTag(ownState));
  const all = transactionCookies(ctx, request, secure);
  const others = all.filter(([name]) => name !== own);
  // As many as the start route lets pend: a callback without a cookie of its own (forged, or a login the start
  // route already cleared) must not cost the browser one of its logins in progress.
  const keep = others.length < all.length ? MAX_OTHER_PENDING_LOGINS : MAX_PENDING_LOGINS;
  if (others.length <= keep) return finished;
  // Newest first by the sealed issue time (whole seconds; within one, the later in the header is the newer, as
  // browsers send cookies of one path oldest first); an unreadable one (another secret, altered) counts as oldest.
  const aged = await Promise.all(
    others.map(async ([name, value], index) => {
      const opened = await ctx.transactions.open(value);
      return { name, index, issuedAt: typeof opened === 'object' ? Number(opened.iat) || 0 : -1 };
    }),
  );
  aged.sort((a, b) => b.issuedAt - a.issuedAt || b.index - a.index);
  const path = transactionCookiePath(ctx, request);
  return [
    ...finished,
    ...aged.slice(keep).map(({ name }) => serializeCookie(name, '', { path, maxAgeSeconds: 0, secure })),
  ];
}

function transactionCookiePrefix(ctx: LoginContext, secure: boolean): string {
  return `${ctx.options.cookies?.transactionName ?? (secure ? '__Secure-kyb-login-tx' : 'kyb-login-tx')}-`;
}

/** One cookie per login, named after its state, so a second tab's login does not overwrite the first one's. */
function transactionCookieName(ctx: LoginContext, secure: boolean, state: string): string {
  return transactionCookiePrefix(ctx, secure) + stateTag(state);
}

/** The transaction cookies a request carries, as [name, value]. */
function transactionCookies(ctx: LoginContext, request: LoginRequest, secure: boolean): Array<[string, string]> {
  const prefix = transactionCookiePrefix(ctx, secure);
  return readCookies(request.header('cookie')).filter(
    ([name]) => name.startsWith(prefix) && STATE_TAG.test(name.slice(prefix.length)),
  );
}

/** The transaction cookie goes only to the callback path, so it is sent nowhere else. */
function transactionCookiePath(ctx: LoginContext, request: LoginRequest): string {
  return new URL(redirectUriFor(ctx, request)).pathname;
}

/** What {@link stateTag} answers: 13 base-36 digits. */
const STATE_TAG = /^[0-9a-z]{13}$/;

/**
 * A short tag of a login's state for its transaction cookie's name. It only has to tell a browser's parallel logins
 * apart and be computed synchronously from the callback's state (to name the cookie to clear), so a 64-bit
 * non-cryptographic hash (cyrb53's mixing, twice) does; it decides nothing: the sealed state is compared in full.
 * Hashing keeps the state itself out of cookie names.
 */
function stateTag(state: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < state.length; i++) {
    const c = state.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return ((h2 >>> 0).toString(36).padStart(7, '0') + (h1 >>> 0).toString(36).padStart(7, '0')).slice(1);
}
