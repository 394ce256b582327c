/**
 * The binding cookie: what ties a login's transaction cookie to the browser that started it, and the ledger of the
 * logins that browser has pending.
 *
 * The transaction cookie is on the callback path, so it cannot be a __Host- cookie, and a sibling subdomain may
 * plant one of its own (Domain=<parent>): the binding cookie, __Host- (Secure, Path=/, no Domain: only this host
 * can set it), ties each transaction to the browser that started it. On plain-http loopback development a
 * __Host- cookie cannot be set (it needs Secure), and there is no sibling subdomain to fear.
 *
 * Because the transaction cookies only reach the callback path, the start route cannot see them; the binding cookie
 * also lists them (tag, size, start time), so that the start route can clear the oldest before they add up to more
 * than a Cookie header can carry.
 */
import { base64url } from 'jose';
import * as oidc from 'openid-client';
import { readCookie, serializeCookie } from './cookies.js';
import type { LoginRequest } from './types.js';

/**
 * Transaction cookies of other logins a callback leaves in place (tabs still signing in). The cookies only reach
 * the callback path, so this is the one place that sees them all; beyond these, the oldest are cleared there.
 */
export const MAX_OTHER_PENDING_LOGINS = 4;

/**
 * What the start route lets a browser's pending transaction cookies add up to, in count and bytes. They all travel
 * in one Cookie header to the callback, and a server refuses a header past its limit (nginx: 8 KB a line, Node:
 * 16 KB in all) before the app sees it, which would lock the user out until they expire. 6 KB leaves room in 8 KB
 * for the session, the binding cookie and the app's own; it holds about three logins with the longest return path,
 * or five with short ones, so a few tabs signing in at once all finish.
 */
export const MAX_PENDING_LOGINS = 1 + MAX_OTHER_PENDING_LOGINS;
const MAX_PENDING_TRANSACTION_BYTES = 6144;

/**
 * The binding cookie's life, as Django's CSRF cookie: long, so that a browser has one before it starts logins in
 * several tabs at once (tabs that each made a fresh one would overwrite each other's, and all but one would fail).
 */
const BINDING_COOKIE_SECONDS = 365 * 24 * 3600;

/** A browser's binding: its random id, and the logins it has pending (oldest first), as the binding cookie lists them. */
export interface Binding {
  id: string;
  pending: PendingLogin[];
}

/** A pending login of the binding cookie: its cookie's tag, its cookie's size, and when it started (Unix seconds). */
export interface PendingLogin {
  tag: string;
  bytes: number;
  issuedAt: number;
}

export function bindingCookieName(secure: boolean): string {
  return secure ? '__Host-kyb-login-bind' : 'kyb-login-bind';
}

/** The request's binding, or undefined when it has none (or one whose id is not ours to trust). */
export function bindingOf(request: LoginRequest, secure: boolean): Binding | undefined {
  return readBinding(readCookie(request.header('cookie'), bindingCookieName(secure)));
}

/** The request's binding, or a fresh one with a new id and nothing pending. */
export function bindingOrNew(request: LoginRequest, secure: boolean): Binding {
  const previous = bindingOf(request, secure);
  return { id: previous?.id ?? oidc.randomState(), pending: previous?.pending ?? [] };
}

/** The Set-Cookie value that stores a binding (on /, so every route of this host reads it). */
export function bindingCookie(binding: Binding, secure: boolean): string {
  return serializeCookie(bindingCookieName(secure), writeBinding(binding), {
    path: '/',
    maxAgeSeconds: BINDING_COOKIE_SECONDS,
    secure,
  });
}

/** What a transaction keeps of its browser's binding: a hash, so the id itself is only ever in its __Host- cookie. */
export async function bindingHash(id: string): Promise<string> {
  return base64url.encode(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`kyb-login binding\0${id}`))),
  );
}

/**
 * Lists a login that starts now in the binding, and answers the pending ones whose cookies must be cleared to make
 * room: the oldest beyond the count and bytes a Cookie header can carry (expired ones are dropped, the browser did
 * so already). Once one is too many, every older one is cleared too, so the survivors are always the newest.
 */
export function admitPendingLogin(binding: Binding, started: PendingLogin, transactionTtl: number): PendingLogin[] {
  const newestFirst = [started];
  const stale: PendingLogin[] = [];
  let bytes = started.bytes;
  for (const pending of [...binding.pending].reverse()) {
    if (pending.issuedAt + transactionTtl <= started.issuedAt) continue; // the browser dropped it already
    if (
      stale.length === 0 &&
      newestFirst.length < MAX_PENDING_LOGINS &&
      bytes + pending.bytes <= MAX_PENDING_TRANSACTION_BYTES
    ) {
      newestFirst.push(pending);
      bytes += pending.bytes;
    } else stale.push(pending);
  }
  binding.pending = newestFirst.reverse();
  return stale;
}

/**
 * The binding cookie without a login that ended (its callback came, success or not), when the binding listed it: or
 * the start route would count it as pending and clear a real login in progress to make room.
 */
export function withoutPendingLogin(request: LoginRequest, secure: boolean, tag: string): string[] {
  const binding = bindingOf(request, secure);
  if (!binding || !binding.pending.some((pending) => pending.tag === tag)) return [];
  binding.pending = binding.pending.filter((pending) => pending.tag !== tag);
  return [bindingCookie(binding, secure)];
}

const BINDING_ID = /^[A-Za-z0-9_-]{43}$/;
const PENDING_ENTRY = /^([0-9a-z]{13}):([0-9a-z]{1,4}):([0-9a-z]{1,8})$/;

/**
 * The binding cookie's value, `<id>.<tag>:<bytes>:<issued>…` (base 36): an id that is not 32 random bytes in
 * base64url voids it all (a fresh one is made), and entries that do not parse are left out. It is not sealed: only
 * this host can set it (__Host-), and a user who edits their own can at most have their own pending logins cleared.
 */
function readBinding(value: string | undefined): Binding | undefined {
  const [id, ...entries] = (value ?? '').split('.');
  if (id === undefined || !BINDING_ID.test(id)) return undefined;
  const pending: PendingLogin[] = [];
  for (const entry of entries.slice(-MAX_PENDING_LOGINS)) {
    const match = PENDING_ENTRY.exec(entry);
    if (match) pending.push({ tag: match[1]!, bytes: parseInt(match[2]!, 36), issuedAt: parseInt(match[3]!, 36) });
  }
  return { id, pending };
}

function writeBinding(binding: Binding): string {
  return [
    binding.id,
    ...binding.pending.map((p) => `${p.tag}:${p.bytes.toString(36)}:${p.issuedAt.toString(36)}`),
  ].join('.');
}
