/** The dedupe store of our adapter's attested endpoint (loaded only by that server: it pulls in the core). */
import { createMemoryStore, type DedupeStore } from '@kyb-webhooks/core';
import { benchNow } from '../fixtures.js';

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
  // Synchronous like the memory store it wraps, so that ours pays for the store's work and not for a wrapper's
  // promises (the DedupeStore contract allows answering with values).
  return {
    claim(eventId, options) {
      const key = `${eventId}#${++sequence}`;
      const claim = inner.claim(key, options);
      if (claim.status === 'acquired') keys.set(claim.token, key);
      return claim;
    },
    complete: (eventId, token, options) => inner.complete(take(eventId, token), token, options),
    release: (eventId, token) => inner.release(take(eventId, token), token),
  };
}
