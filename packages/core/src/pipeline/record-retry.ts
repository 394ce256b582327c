/**
 * Recording a success again after the store failed to: once the handlers have succeeded, a `complete()` (or, in
 * order, a `completeInOrder()`) that throws or passes `storeTimeoutMs` leaves the event claimed for the rest of its
 * lease. Its redeliveries are answered `409 in_progress` meanwhile, an ordered stream stalls behind it, and once the
 * lease ends the next redelivery runs the handlers a second time. A store that failed for a moment (a connection
 * that could not be made in time, a failover) has usually recovered a few seconds later, so the record is tried
 * again in the background, after the delivery was answered: its answer never waits for a retry.
 */
import { handOff } from './deadline.js';

/** How long to wait before each new attempt; three attempts, over about 10 s, well inside the default 60 s lease. */
export const RECORD_RETRY_DELAYS_MS: readonly number[] = [250, 2_000, 8_000];

/**
 * Runs `record` again after each of {@link RECORD_RETRY_DELAYS_MS} until it runs without throwing (it says itself what it found), or calls
 * `gaveUp` with the last error. Nothing here can fail the caller: the retries run on their own, handed to `waitUntil`
 * on runtimes that stop work once the answer is sent.
 *
 * @example
 * ```ts
 * retryRecording((attempt) => recordAgain(attempt), (attempts, error) => logGaveUp(attempts, error), item.waitUntil)
 * ```
 */
export function retryRecording(
  record: (attempt: number) => Promise<void>,
  gaveUp: (attempts: number, lastError: unknown) => void,
  waitUntil: ((promise: Promise<unknown>) => void) | undefined,
): void {
  const delays = RECORD_RETRY_DELAYS_MS;
  const retries = (async () => {
    let lastError: unknown;
    for (let index = 0; index < delays.length; index++) {
      await sleep(delays[index]!);
      try {
        await record(index + 2); // attempt 1 was the delivery's own
        return;
      } catch (error) {
        lastError = error;
      }
    }
    gaveUp(delays.length + 1, lastError);
  })().catch(() => {}); // a report that throws (a logger's fault) must not become an unhandled rejection
  handOff(waitUntil, retries);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    // On Node a pending retry must not keep a process that is shutting down alive; the lease covers that case.
    (timer as { unref?: () => void }).unref?.();
  });
}
