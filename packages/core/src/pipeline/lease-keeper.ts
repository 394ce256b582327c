/**
 * Keeps the claim of a handler that passed `handlerTimeoutMs` and still runs (docs/architecture.md §7.1). Its delivery
 * was answered 5xx, and the claim stays held so the service's retry answers `in_progress` instead of running the
 * handlers a second time beside it; but a claim only holds for `leaseMs`. So while the late handler runs, the lease is
 * extended with the store's `extend()` at once and then every `leaseMs / 3`: each extension leaves a whole lease, and
 * two failed ones in a row still leave a third of it. Stopping is the caller's: when the handler settles, before its
 * outcome settles the claim.
 *
 * A handler that never settles keeps its event claimed as long as the process lives (as BullMQ renews a job's lock
 * while its processor runs): the abort signal handlers get at `handlerTimeoutMs` is the way to end it. A process that
 * dies stops extending, and the lease ends as after any crash.
 */
import type { Envelope } from '../events/envelope.js';
import { safeLog, type Logger } from '../log/logger.js';
import type { DedupeStore } from '../store/dedupe.js';
import { handOff } from './deadline.js';

/** What keeping leases needs of a receiver: its store, its lease, and its store calls (within storeTimeoutMs). */
export interface LeaseKeeperParts {
  store: DedupeStore;
  leaseMs: number;
  logger: Logger | undefined;
  callStore<T>(operation: string, subject: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>>;
}

/**
 * Keeps the lease `token` holds on `dedupeKey` until the returned function is called; see the file's comment.
 * `envelope` only names the event in the log.
 */
export type KeepLease = (dedupeKey: string, token: string, envelope: Envelope) => () => void;

/**
 * The late outcome of a handler past handlerTimeoutMs: its claim's lease kept while `running` runs, then settled by
 * `onSuccess` or `onFailure`, handed to the delivery's `waitUntil` (a worker runtime would otherwise end it).
 */
export function settleWhenDone(
  keepLease: () => () => void,
  running: PromiseLike<unknown>,
  outcomes: {
    onSuccess: () => unknown;
    onFailure: () => unknown;
    waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  },
): void {
  const stopKeeping = keepLease();
  const settled = running.then(
    () => {
      stopKeeping();
      return outcomes.onSuccess();
    },
    () => {
      stopKeeping();
      return outcomes.onFailure();
    },
  );
  handOff(outcomes.waitUntil, settled);
}

/** Creates the lease keeper of one receiver. */
export function createLeaseKeeper(parts: LeaseKeeperParts): KeepLease {
  const { store, logger, callStore } = parts;
  const extendOptions = Object.freeze({ leaseMs: parts.leaseMs });
  const everyMs = Math.max(1, Math.floor(parts.leaseMs / 3));

  return function keepLease(dedupeKey, token, envelope) {
    const where = { eventId: envelope.event_id, eventType: envelope.event };
    const extend = store.extend;
    if (typeof extend !== 'function') {
      safeLog(logger, {
        level: 'warn',
        message: `a handler passed handlerTimeoutMs and still runs, and the store has no extend(): if it runs past leaseMs (${parts.leaseMs} ms), a retry may run the handlers beside it. Implement extend(eventId, token, { leaseMs }) in the store, or raise leaseMs above your slowest handler`,
        ...where,
      });
      return () => {};
    }
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;

    /** One extension: `true` kept (or failed, to be tried again), `false` given up, logged why. */
    async function extendOnce(): Promise<boolean> {
      let kept: unknown;
      try {
        kept = await callStore('extend', dedupeKey, () => extend!.call(store, dedupeKey, token, extendOptions));
      } catch (error) {
        if (!stopped)
          safeLog(logger, { ...EXTEND_FAILED, message: `${EXTEND_FAILED.message} ${everyMs} ms`, ...where, error });
        return true;
      }
      if (stopped || kept === true) return true;
      safeLog(logger, { ...(kept === false ? LEASE_LOST : NOT_BOOLEAN), ...where });
      return false;
    }

    async function beat(): Promise<void> {
      if (!(await extendOnce()) || stopped) return;
      timer = setTimeout(() => void beat(), everyMs);
      // The keeper must not hold a process open by itself: the handler's own work does, if any.
      (timer as { unref?: () => void }).unref?.();
    }

    void beat();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  };
}

const EXTEND_FAILED = {
  level: 'error',
  message: 'extending the lease of a handler past handlerTimeoutMs failed; trying again in',
  code: 'store_unavailable',
} as const;
const LEASE_LOST = {
  level: 'warn',
  message:
    'the lease ended while a handler past handlerTimeoutMs still runs: a retry may run the handlers beside it; raise leaseMs, or end the handler when its abort signal fires',
} as const;
const NOT_BOOLEAN = {
  level: 'error',
  message: 'the store answered extend() with something other than a boolean; the lease is no longer extended',
  code: 'store_unavailable',
} as const;
