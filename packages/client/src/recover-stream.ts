import type { ReceiveResult } from '@kyb-webhooks/core';
import type { RecoverFailure, RecoverTarget, StreamRecovery } from './recover.js';

/**
 * The code of a {@link RecoverFailure} for an event the delivery log shows unacknowledged but the events API did not
 * serve (its status is 0: no receiver saw it).
 *
 * @example
 * ```ts
 * const missing = report.streams.flatMap((s) => s.failures).filter((f) => f.code === EVENT_NOT_SERVED)
 * ```
 */
export const EVENT_NOT_SERVED = 'event_not_served';

/**
 * One stream's replay, event by event: what each answer counts as, when the stream stops (ordering enforce), and,
 * at the end, which unacknowledged events of the delivery log the events API never served. Split from `recover()`
 * so that the loop there only fetches and replays.
 *
 * @example
 * ```ts
 * const replay = new StreamReplay(stream, receiver, unacknowledged)
 * for await (const event of client.events(id, { afterSeq })) if (replay.admits(event)) replay.record(event, await receiver.replay(event))
 * replay.finish()
 * ```
 */
export class StreamReplay {
  readonly #stream: StreamRecovery;
  readonly #enforce: boolean;
  /** Under enforce, whether a refused attestation lets the next event be tried once (see `record`). */
  readonly #probes: boolean;
  /** Unacknowledged events of the log not seen yet, by event id, with their seq. */
  readonly #notSeen: Map<string, number>;
  #blocked = false;
  /** Under enforce, an event that failed its own verification, while the next event is tried. */
  #probing: RecoverFailure | undefined;

  constructor(
    stream: StreamRecovery,
    receiver: RecoverTarget['receiver'],
    unacknowledged: ReadonlyMap<string, number>,
  ) {
    this.#stream = stream;
    this.#enforce = receiver.orderingMode === 'enforce';
    this.#probes = this.#enforce && receiver.skipsUnfillable !== false;
    this.#notSeen = new Map(unacknowledged);
  }

  /** Whether to replay this event; false (and counted `held`) once the stream waits for an earlier failing one. */
  admits(event: { event_id: string }): boolean {
    this.#notSeen.delete(event.event_id);
    if (!this.#blocked) return true;
    this.#stream.held += 1;
    return false;
  }

  /**
   * Counts a replayed event's answer. Under enforce the stream waits for a failing event (a late one, behind the
   * cursor, holds nothing up), except that an event refused for its own attestation lets the next be tried once: the
   * receiver's backfill then tells whether it is gone for good, and its `ordering.onUnfillable` may skip it. Only a
   * receiver of this process proves a skip by going on; one that posts elsewhere (`skipsUnfillable: false`) does not.
   */
  record(event: { event_id: string; seq: number }, result: ReceiveResult): void {
    const stream = this.#stream;
    stream.replayed += 1;
    const outcome = classify(result);
    stream[outcome] += 1;
    if (outcome !== 'failed') {
      if (this.#probing) this.#skipped(this.#probing);
      return;
    }
    const failure: RecoverFailure = {
      eventId: event.event_id,
      seq: event.seq,
      code: result.code ?? 'failed',
      status: result.status,
    };
    if (result.code === 'backfill_unfillable') failure.permanent = true;
    stream.failures.push(failure);
    if (!this.#enforce || result.code === 'late_unhandled') return;
    if (this.#probes && this.#probing === undefined && isOwnVerificationRefusal(result)) {
      this.#probing = failure;
      return;
    }
    if (this.#probing && failure.permanent) this.#probing.permanent = true;
    this.#blocked = true;
  }

  /**
   * After the stream's last event: an event the delivery log shows unacknowledged that the events API did not serve
   * after `afterSeq` is a failure, so that a service leaving an event out never reads as a recovery done.
   */
  finish(): void {
    for (const [eventId, seq] of this.#notSeen) {
      this.#stream.failures.push({ eventId, seq, code: EVENT_NOT_SERVED, status: 0 });
      this.#stream.failed += 1;
    }
    this.#notSeen.clear();
  }

  /** The stream went past the event that failed: onUnfillable skipped it (or the cursor was moved by hand). */
  #skipped(failure: RecoverFailure): void {
    failure.skipped = true;
    this.#stream.failed -= 1;
    this.#stream.skipped += 1;
    this.#probing = undefined;
  }
}

/** A refusal of the replayed event's own attestation (served without one, or not verifiable): not a handler's failure. */
function isOwnVerificationRefusal(result: ReceiveResult): boolean {
  return result.status === 401 && typeof result.code === 'string' && result.code.startsWith('attestation_');
}

function classify(result: ReceiveResult): 'processed' | 'duplicate' | 'late' | 'failed' {
  if (result.status < 200 || result.status >= 300) return 'failed';
  if (result.code === 'duplicate') return 'duplicate';
  if (result.code === 'late') return 'late';
  return 'processed';
}
