/**
 * What a started login must remember until its callback: the PKCE verifier, the state and nonce it sent, where to
 * return, and the redirect URI it used (the token request must repeat it exactly).
 *
 * @example
 * ```ts
 * const saved: LoginTransaction | undefined = await store.take(id)
 * ```
 */
export interface LoginTransaction {
  state: string;
  codeVerifier: string;
  nonce: string;
  returnTo: string;
  redirectUri: string;
}

/**
 * Server-side storage of login transactions, for apps that prefer it to the default encrypted cookie (which then
 * holds only a random id). `take` must be atomic: it returns the transaction once and removes it, so a replayed
 * callback finds nothing.
 *
 * @example
 * ```ts
 * const redisTransactions: TransactionStore = {
 *   set: async (id, tx, ttl) => { await redis.set(`login:${id}`, JSON.stringify(tx), 'EX', ttl) },
 *   take: async (id) => { const v = await redis.getdel(`login:${id}`); return v ? JSON.parse(v) : undefined },
 * }
 * ```
 */
export interface TransactionStore {
  set(id: string, transaction: LoginTransaction, ttlSeconds: number): Promise<void>;
  take(id: string): Promise<LoginTransaction | undefined>;
}

/**
 * A {@link TransactionStore} in this process's memory: for a single instance. Expired entries are dropped as new
 * ones arrive, and at most `maxEntries` are kept (the oldest go first). Starting a login needs no sign-in, so a flood
 * of requests to the start route can push out logins still in progress: their callbacks then answer
 * `transaction_missing` (start again). Rate-limit the start route, or use a shared store (Redis) sized for it.
 *
 * @example
 * ```ts
 * const login = await createLogin({ ...options, transactionStore: memoryTransactionStore() })
 * ```
 */
export function memoryTransactionStore(options: { maxEntries?: number } = {}): TransactionStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { transaction: LoginTransaction; expiresAt: number }>();
  return {
    async set(id, transaction, ttlSeconds) {
      const now = Date.now();
      for (const [key, entry] of entries) {
        if (entry.expiresAt > now && entries.size < maxEntries) break;
        entries.delete(key);
      }
      entries.set(id, { transaction, expiresAt: now + ttlSeconds * 1000 });
    },
    async take(id) {
      const entry = entries.get(id);
      entries.delete(id);
      return entry && entry.expiresAt > Date.now() ? entry.transaction : undefined;
    },
  };
}
