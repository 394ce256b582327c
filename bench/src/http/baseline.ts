/**
 * The server-side pieces around the apps: the hand-written node:crypto HMAC check of endpoint (b), and the
 * dedupe store of endpoint (c).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createMemoryStore, type DedupeStore } from '@kyb-webhooks/core';
import { benchNow } from '../fixtures.js';

const TOLERANCE_S = 300;

/** (b): what a hand-written receiver checks: t within the skew, HMAC-SHA256 over "<t>." + bytes, constant time. */
export function createHmacCheck(secrets: Record<string, string>): (header: string | undefined, body: Uint8Array) => boolean {
  return (header, body) => {
    if (header === undefined) return false;
    let t: string | undefined;
    let v1: string | undefined;
    let kv: string | undefined;
    for (const field of header.split(',')) {
      const eq = field.indexOf('=');
      const key = field.slice(0, eq);
      if (key === 't') t = field.slice(eq + 1);
      else if (key === 'v1') v1 = field.slice(eq + 1);
      else if (key === 'kv') kv = field.slice(eq + 1);
    }
    const secret = kv === undefined ? undefined : secrets[kv];
    if (t === undefined || v1 === undefined || secret === undefined) return false;
    if (Math.abs(benchNow() / 1000 - Number(t)) > TOLERANCE_S) return false;
    const expected = Buffer.from(v1, 'hex');
    const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  };
}

/**
 * The default memory store, with every claim under its own key (`<event_id>#<n>`), so the load generator can cycle
 * through a pool of pre-signed attested deliveries (an RS256 signature per request would swamp it): each request
 * does the store's real work (claim with a fresh lease token, complete) instead of being answered as a duplicate.
 */
export function perRequestKeyStore(): DedupeStore {
  const inner = createMemoryStore({ now: benchNow });
  const keys = new Map<string, string>(); // lease token → the key it was claimed under
  let sequence = 0;
  const take = (eventId: string, token: string): string => {
    const key = keys.get(token) ?? eventId;
    keys.delete(token);
    return key;
  };
  return {
    async claim(eventId, options) {
      const key = `${eventId}#${++sequence}`;
      const claim = await inner.claim(key, options);
      if (claim.status === 'acquired') keys.set(claim.token, key);
      return claim;
    },
    complete: (eventId, token, options) => inner.complete(take(eventId, token), token, options),
    release: (eventId, token) => inner.release(take(eventId, token), token),
  };
}
