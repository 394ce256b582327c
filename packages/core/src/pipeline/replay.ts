import { DeliveryContext } from './dispatch.js';
import { KybWebhookError } from '../errors.js';

/**
 * Options of `receiver.replay`.
 *
 * @example
 * ```ts
 * const options: ReplayOptions = { signal: AbortSignal.timeout(60_000) }
 * ```
 */
export interface ReplayOptions {
  /**
   * Aborting it before the replay starts rejects the call with the signal's reason; once the handlers run, it aborts
   * their `context.signal` (the handlers decide whether to stop; the result says how they ended).
   */
  signal?: AbortSignal;
}

/**
 * What {@link replayFetched} borrows from the receiver.
 *
 * @example
 * ```ts
 * const steps: ReplaySteps<VerifiedItem, ReceiveResult> = { verify: verifyFetched, refuse: (e) => reject(e), process }
 * ```
 */
export interface ReplaySteps<Item extends { context: DeliveryContext }, Result> {
  /** The receiver's verification of an event fetched from the API (no HMAC; attestation and schemas as a delivery). */
  verify(raw: unknown): Promise<Item | KybWebhookError>;
  /** The answer for an event that failed verification. */
  refuse(error: KybWebhookError): Result;
  /** Dedupe, ordering and handlers, exactly as for a delivery that passed the same checks. */
  process(item: Item): Promise<Result>;
}

/**
 * Runs an event the caller fetched from the KYB API through the receiver's pipeline after the HMAC step: verify,
 * then dedupe, ordering and handlers as `receive()` does. The caller's signal is tied to the handlers' context
 * signal for the duration of the run.
 *
 * @example
 * ```ts
 * return replayFetched(raw, options, { verify: verifyFetched, refuse: (e) => reject(e), process })
 * ```
 */
export async function replayFetched<Item extends { context: DeliveryContext }, Result>(
  raw: unknown,
  options: ReplayOptions | undefined,
  steps: ReplaySteps<Item, Result>,
): Promise<Result> {
  const signal = options?.signal;
  signal?.throwIfAborted();
  const item = await steps.verify(raw);
  if (item instanceof KybWebhookError) return steps.refuse(item);
  if (!signal) return steps.process(item);
  const abort = () => DeliveryContext.abort(item.context, signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  if (signal.aborted) abort(); // aborted while verifying
  try {
    return await steps.process(item);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
