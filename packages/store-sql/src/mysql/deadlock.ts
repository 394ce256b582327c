/** MySQL's and MariaDB's error number for a statement InnoDB chose as a deadlock's victim. */
export const ER_LOCK_DEADLOCK = 1213;

/** How many times a statement chosen as a deadlock's victim runs in all before its error is thrown. */
export const MAX_DEADLOCK_ATTEMPTS = 10;

/** Whether `error` is InnoDB refusing a statement as a deadlock's victim. */
export function isDeadlock(error: unknown): boolean {
  return (error as { errno?: number } | null)?.errno === ER_LOCK_DEADLOCK;
}

/**
 * Runs `step` again while InnoDB chooses it as a deadlock's victim, at most {@link MAX_DEADLOCK_ATTEMPTS} times in
 * all. Only for steps whose statements run with autocommit: a victim's statement was rolled back as a whole, so
 * running it again is safe, and its answer is the one it would have given without the deadlock.
 *
 * @example
 * ```ts
 * const [ok] = await retryingDeadlocks(() => pool.query(completeSql, values))
 * ```
 */
export async function retryingDeadlocks<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= MAX_DEADLOCK_ATTEMPTS) throw error;
    }
  }
}
