/**
 * Steps 6 to 8 of the pipeline (docs/architecture.md §3 and §7.1), for an event that passed every check (checks.ts): claim it in the
 * dedupe store (dedupe.ts), run its handlers (run-handlers.ts), then settle the claim: complete() after a success,
 * release() after a failure so the service's retry runs the handlers again. Every store call has a deadline shorter
 * than the lease, so every delivery gets an answer.
 */
import { TRACING_CHANNELS, tracingChannelsOf, type StoreTrace } from '../telemetry/channels.js';
import { Observers, type ReceiverTelemetry } from '../telemetry/observers.js';
import type { VerifiedItem } from './checks.js';
import { handOff, SharedDeadline, TIMED_OUT, type Thenable } from './deadline.js';
import { checkClaimResult, type ClaimResult, type DedupeStore } from '../store/dedupe.js';
import { HandlerError, type HandlerContext, type HandlerRegistry } from './dispatch.js';
import { createLeaseKeeper, settleWhenDone, type KeepLease } from './lease-keeper.js';
import type { Envelope } from '../events/envelope.js';
import { rejection, type KybWebhookError } from '../errors.js';
import { safeLog, type Logger } from '../log/logger.js';
import type { ReceiveResult } from '../receiver-types.js';
import { answerDuplicate, answerProcessed, reject } from './outcomes.js';
import { retryRecording } from './record-retry.js';
import { HANDLED, type HandlerOutcome, type RunHandlers } from './run-handlers.js';

/** What settling a claim needs of an event: its key, its envelope for the log, and the delivery's `waitUntil`. */
export type SettledItem = Pick<VerifiedItem, 'dedupeKey' | 'envelope' | 'waitUntil'>;

/** What the claim, run and settle steps of one receiver work with. */
export interface ClaimRunSettleOptions {
  store: DedupeStore;
  leaseMs: number;
  retainMs: number;
  storeTimeoutMs: number;
  logger: Logger | undefined;
  handlers: HandlerRegistry;
  runHandlers: RunHandlers;
  /** The receiver's `telemetry`, which watches every store call with the store channel. */
  telemetry?: ReceiverTelemetry | undefined;
}

/** The claim, run and settle steps of one receiver; the ordered path (ordering/receive.ts) borrows the parts it needs. */
export interface ClaimRunSettle {
  /**
   * Steps 6 to 8 with ordering off, for a verified event (a delivery, or a fetched one given to `replay`): dedupe,
   * dispatch within handlerTimeoutMs, settle. May throw only through a bug; the callers turn that into internal_error.
   */
  processVerified(item: VerifiedItem): Promise<ReceiveResult>;
  /** Calls the store's method `operation` within storeTimeoutMs; a synchronous throw, a rejection and a timeout all throw. */
  callStore<T>(operation: string, subject: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  /** Claims the key within storeTimeoutMs; an answer outside the contract throws. */
  claim(dedupeKey: string, waitUntil?: VerifiedItem['waitUntil']): Promise<ClaimResult>;
  /** Runs the handlers of a claimed event for the ordered path; a failure has released the claim. */
  runClaimed(
    item: VerifiedItem,
    token: string,
    settleLateSuccess: () => Promise<void>,
  ): Promise<KybWebhookError | undefined>;
  /**
   * Records a success with complete() (`ran` names what succeeded, for the log). Never throws: a failure is logged and
   * tried again in the background. Settles synchronously when the store answers so.
   */
  settleSuccess(item: SettledItem, token: string, late: boolean, ran?: string): void | Promise<void>;
  /** Frees the claim after a failure, so that the service's retry runs the handlers again. */
  settleFailure(dedupeKey: string, token: string, envelope: Envelope): Promise<void>;
  /** Keeps the lease of a handler past handlerTimeoutMs until the returned function is called (lease-keeper.ts). */
  keepLease: KeepLease;
}

/** Creates the claim, run and settle steps of one receiver. */
export function createClaimRunSettle(options: ClaimRunSettleOptions): ClaimRunSettle {
  const { store, storeTimeoutMs, logger, handlers, runHandlers } = options;
  // Frozen once: the store only reads them, and a delivery need not allocate them again.
  const claimOptions = Object.freeze({ leaseMs: options.leaseMs });
  const { callStoreSoon, callStore } = createStoreCaller(storeTimeoutMs, options.telemetry);
  // 8. settle: complete() after a success, release() after a failure
  const { settleSuccess, settleFailure } = createSettle({
    store,
    logger,
    retainMs: options.retainMs,
    callStoreSoon,
    callStore,
  });
  const keepLease = createLeaseKeeper({ store, leaseMs: options.leaseMs, logger, callStore });

  /** Claims the key within storeTimeoutMs, synchronously when the store answers so; throws as {@link claim}. */
  function claimSoon(dedupeKey: string, waitUntil: VerifiedItem['waitUntil']): ClaimResult | Promise<ClaimResult> {
    const answer = callStoreSoon('claim', dedupeKey, () => store.claim(dedupeKey, claimOptions));
    if (typeof (answer as Thenable | null)?.then !== 'function') return checkClaimResult(answer as ClaimResult);
    return (answer as Promise<ClaimResult>).then(checkClaimResult, (error: unknown) => {
      if (error instanceof StoreTimeoutError) {
        // A claim that lands after we gave up would hold the event for a whole lease: hand it back.
        const handBack = Promise.resolve(error.pending).then(
          (late) => {
            const token = (late as { status?: unknown; token?: unknown } | null)?.token;
            if ((late as { status?: unknown } | null)?.status === 'acquired' && typeof token === 'string') {
              callStore('release', dedupeKey, () => store.release(dedupeKey, token)).catch(() => {});
            }
          },
          () => {},
        );
        handOff(waitUntil, handBack);
      }
      throw error;
    });
  }

  async function claim(dedupeKey: string, waitUntil?: VerifiedItem['waitUntil']): Promise<ClaimResult> {
    return claimSoon(dedupeKey, waitUntil);
  }

  async function processVerified(item: VerifiedItem): Promise<ReceiveResult> {
    const { envelope, event, context, dedupeKey, typed } = item;
    // 6. dedupe: claim the event
    let claimed: ClaimResult;
    try {
      const soon = claimSoon(dedupeKey, item.waitUntil);
      claimed = typeof (soon as Thenable).then === 'function' ? await soon : (soon as ClaimResult);
    } catch (error) {
      return {
        ...reject(logger, rejection('store_unavailable', storeFailure('claim', error), error), envelope),
        event,
      };
    }
    if (claimed.status === 'completed') return answerDuplicate(logger, envelope, event);
    if (claimed.status === 'in_progress') return { ...reject(logger, 'in_progress', envelope), event };

    // 7. dispatch, within handlerTimeoutMs
    const token = claimed.token;
    const soon = runHandlers(
      () => handlers.run(event as Envelope, context as unknown as HandlerContext, typed),
      context,
      envelope,
    );
    const outcome = typeof (soon as Thenable).then === 'function' ? await soon : (soon as HandlerOutcome);
    if (outcome !== HANDLED) {
      const failure = await settleUnhandled(item, token, outcome, () => settleSuccess(item, token, true));
      return { ...reject(logger, failure, envelope), event };
    }

    // 8. settle a success
    const settled = settleSuccess(item, token, false);
    if (settled) await settled;
    return answerProcessed(logger, envelope, event);
  }

  async function runClaimed(
    item: VerifiedItem,
    token: string,
    settleLateSuccess: () => Promise<void>,
  ): Promise<KybWebhookError | undefined> {
    const { envelope, context } = item;
    const outcome = await runHandlers(
      () => handlers.run(item.event as Envelope, context as unknown as HandlerContext, item.typed),
      context,
      envelope,
    );
    return outcome === HANDLED ? undefined : await settleUnhandled(item, token, outcome, settleLateSuccess);
  }

  /**
   * A handler failed, or passed handlerTimeoutMs (a delivery that succeeds never calls this). A failure frees the
   * claim, so the service's retry runs the handlers again. Past the deadline the claim stays held, its lease extended
   * while the handler still runs (lease-keeper.ts), so no retry runs it concurrently; its late outcome settles the
   * claim (`settleLateSuccess` records a success, so the retry is answered duplicate; a failure frees the claim).
   */
  async function settleUnhandled(
    item: VerifiedItem,
    token: string,
    outcome: Exclude<HandlerOutcome, typeof HANDLED>,
    settleLateSuccess: () => unknown,
  ): Promise<KybWebhookError> {
    const { dedupeKey, envelope } = item;
    if (outcome instanceof HandlerError) {
      await settleFailure(dedupeKey, token, envelope);
      return rejection('handler_failed', undefined, outcome);
    }
    settleWhenDone(() => keepLease(dedupeKey, token, envelope), outcome.stillRunning, {
      onSuccess: settleLateSuccess,
      onFailure: () => settleFailure(dedupeKey, token, envelope),
      waitUntil: item.waitUntil,
    });
    return rejection('handler_timeout');
  }

  return { processVerified, callStore, claim, runClaimed, settleSuccess, settleFailure, keepLease };
}

// The `kyb-webhooks:store` tracing channel (telemetry/channels.ts), looked up once per process.
const storeChannels = tracingChannelsOf(TRACING_CHANNELS.store);

/** A store method's call within storeTimeoutMs; see {@link createStoreCaller}. */
type CallStoreSoon = <T>(operation: string, subject: string, call: () => T | PromiseLike<T>) => T | Promise<Awaited<T>>;
type CallStore = ClaimRunSettle['callStore'];

/**
 * Calls the store's method `operation` within storeTimeoutMs. A store that answers synchronously (the built-in
 * memory store, a custom in-process one) gets its answer back as it is, with no deadline timer and no promise: a
 * synchronous call cannot be cut short anyway, and a delivery spares a promise and a microtask per call. A method
 * that answers with a promise (any I/O store, or a memory-store method replaced by a slow one) keeps its deadline.
 */
function createStoreCaller(
  storeTimeoutMs: number,
  telemetry: ReceiverTelemetry | undefined,
): { callStoreSoon: CallStoreSoon; callStore: CallStore } {
  const observers = new Observers('store', storeChannels, telemetry);
  const deadline = new SharedDeadline(storeTimeoutMs);
  function callWithin<T>(operation: string, call: () => T | PromiseLike<T>): T | Promise<Awaited<T>> {
    const pending = call();
    if (typeof (pending as Thenable | null | undefined)?.then !== 'function') return pending as T;
    return (deadline.within(pending) as Promise<Awaited<T> | typeof TIMED_OUT>).then((answer) => {
      if (answer === TIMED_OUT) throw new StoreTimeoutError(operation, storeTimeoutMs, pending);
      return answer;
    });
  }

  // `subject` (the event's key, or the stream id) only names the call on the store tracing channel.
  function callStoreSoon<T>(
    operation: string,
    subject: string,
    call: () => T | PromiseLike<T>,
  ): T | Promise<Awaited<T>> {
    if (!observers.active) return callWithin(operation, call);
    const trace: StoreTrace = { operation, subject };
    return observers.run(trace, () => callWithin(operation, call));
  }

  async function callStore<T>(operation: string, subject: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>> {
    return (await callStoreSoon(operation, subject, call)) as Awaited<T>;
  }

  return { callStoreSoon, callStore };
}

/** What settling the claims of one receiver works with. */
interface SettleParts {
  store: DedupeStore;
  logger: Logger | undefined;
  retainMs: number;
  callStoreSoon: CallStoreSoon;
  callStore: CallStore;
}

/**
 * Step 8 of one receiver: complete() after a success (tried again in the background when it fails), release() after a
 * failure.
 */
function createSettle(parts: SettleParts): Pick<ClaimRunSettle, 'settleSuccess' | 'settleFailure'> {
  const { store, logger, callStoreSoon, callStore } = parts;
  // Frozen once: the store only reads them, and a delivery need not allocate them again.
  const completeOptions = Object.freeze({ retainMs: parts.retainMs });

  /**
   * Records a success. If that fails the handlers still succeeded: the delivery is acknowledged all the same, and
   * complete() is tried again in the background (record-retry.ts). Settles synchronously when the store answers so.
   */
  function settleSuccess(item: SettledItem, token: string, late: boolean, ran = 'the handlers'): void | Promise<void> {
    let answer: boolean | Promise<boolean>;
    try {
      answer = callStoreSoon('complete', item.dedupeKey, () => store.complete(item.dedupeKey, token, completeOptions));
    } catch (error) {
      completeFailed(error, item, token, ran);
      return;
    }
    if (typeof (answer as Thenable | null)?.then !== 'function') {
      // The usual answer, checked here: reportCompleted is for the rare ones, and a delivery need not call it.
      if (answer !== true || late) reportCompleted(logger, answer, item.envelope);
      return;
    }
    return (answer as Promise<boolean>).then(
      (completed) => {
        if (completed !== true || late) reportCompleted(logger, completed, item.envelope);
      },
      (error: unknown) => completeFailed(error, item, token, ran),
    );
  }

  /** Logs a complete() that threw or timed out after the handlers succeeded, and tries it again in the background. */
  function completeFailed(error: unknown, item: SettledItem, token: string, ran: string): void {
    const { envelope } = item;
    const where = { eventId: envelope.event_id, eventType: envelope.event };
    safeLog(logger, {
      level: 'error',
      message: `complete failed after ${ran} succeeded: ${storeFailure('complete', error)}; trying again in the background`,
      code: 'store_unavailable',
      ...where,
      error,
    });
    retryRecording(
      async (attempt) => {
        const completed = await callStore('complete', item.dedupeKey, () =>
          store.complete(item.dedupeKey, token, completeOptions),
        );
        if (completed === true) {
          safeLog(logger, {
            level: 'info',
            message: `complete succeeded at attempt ${attempt}: the event is recorded as processed`,
            ...where,
          });
        } else if (completed === false) {
          // An attempt that timed out may have landed meanwhile; or the lease ended, and a redelivery may run again.
          safeLog(logger, {
            level: 'warn',
            message: `complete at attempt ${attempt} found the event no longer claimed by this delivery: an earlier attempt landed late, or the lease ended`,
            ...where,
          });
        } else {
          safeLog(logger, {
            level: 'error',
            message: 'the store answered complete() with something other than a boolean',
            code: 'store_unavailable',
            ...where,
          });
        }
      },
      (attempts, lastError) => {
        safeLog(logger, {
          level: 'error',
          message: `complete failed ${attempts} times after ${ran} succeeded: ${storeFailure('complete', lastError)}; the event stays claimed until its lease ends (leaseMs), and a redelivery after that runs the handlers again`,
          code: 'store_unavailable',
          ...where,
          error: lastError,
        });
      },
      item.waitUntil,
    );
  }

  async function settleFailure(dedupeKey: string, token: string, envelope: Envelope): Promise<void> {
    try {
      const released = await callStore('release', dedupeKey, () => store.release(dedupeKey, token));
      if (typeof released !== 'boolean')
        throw new TypeError('the store answered release() with something other than a boolean');
    } catch (error) {
      safeLog(logger, {
        level: 'error',
        message: 'release failed; the event stays claimed until its lease expires',
        code: 'store_unavailable',
        eventId: envelope.event_id,
        eventType: envelope.event,
        error,
      });
    }
  }

  return { settleSuccess, settleFailure };
}

/** Logs what settleSuccess saw besides a timely `true` from complete(): false, not a boolean, or a late success. */
function reportCompleted(logger: Logger | undefined, completed: unknown, envelope: Envelope): void {
  const where = { eventId: envelope.event_id, eventType: envelope.event };
  if (completed === false) {
    safeLog(logger, {
      level: 'warn',
      message: 'the lease expired before the handlers finished; raise leaseMs above your slowest handler',
      ...where,
    });
  } else if (completed !== true) {
    safeLog(logger, {
      level: 'error',
      message: 'the store answered complete() with something other than a boolean',
      code: 'store_unavailable',
      ...where,
    });
  } else {
    safeLog(logger, {
      level: 'warn',
      message: 'a handler that passed handlerTimeoutMs finished later; its success was recorded',
      ...where,
    });
  }
}

/** A store call that did not settle within storeTimeoutMs; `pending` is the call, which may still settle. */
class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  constructor(
    readonly operation: string,
    timeoutMs: number,
    readonly pending: unknown,
  ) {
    super(`the store's ${operation}() did not settle within storeTimeoutMs (${timeoutMs} ms)`);
  }
}

/** Why a store call failed, for the log: timed out, answered unexpectedly, or threw. */
export function storeFailure(operation: string, error: unknown): string {
  if (error instanceof StoreTimeoutError) return error.message;
  if (error instanceof TypeError && /answered/.test(error.message)) return error.message;
  return `${operation} failed`;
}
