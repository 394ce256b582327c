/*
 * A verified delivery into a queue job and back (queue mode, docs/queue-mode.md): the receiver writes what the checks
 * established; a worker rebuilds the item the pipeline's dedupe, ordering and settle steps take, without checking
 * anything again.
 */
import type { Envelope } from '../events/envelope.js';
import type { KybEvent, UnknownKybEvent } from '../events/events.js';
import { withAnswers, type VerifiedItem } from '../pipeline/checks.js';
import { locateReleasedAnswerList } from '../events/released-answers.js';
import { DeliveryContext } from '../pipeline/dispatch.js';
import type { QueuedEvent, QueuedPayload, QueueJob } from './types.js';

/** The job a verified delivery becomes. `now` is the receiver's clock. */
export function queuedEventOf(item: VerifiedItem, now: number): QueuedEvent {
  const { envelope, context } = item;
  return {
    key: item.dedupeKey,
    eventId: envelope.event_id,
    streamId: envelope.stream_id,
    seq: envelope.seq,
    type: envelope.event,
    payload: {
      // The validated event: for a known type, its data as the schema checked it.
      envelope: item.event as unknown as Record<string, unknown>,
      authentication: context.authentication,
      ...(context.claims !== undefined ? { claims: context.claims } : {}),
      ...(context.deliveryAttempt !== undefined ? { deliveryAttempt: context.deliveryAttempt } : {}),
      typed: item.typed,
      receivedAt: now,
    },
  };
}

/**
 * The item a worker runs through the pipeline for `job`, whose `payload` is opened (queueEncryption) or as stored: the handlers get the context they would have got inline
 * (a release's answers read from the claims again), plus the job's id, attempt and enqueue time.
 */
export async function itemOfJob(
  job: QueueJob,
  payload: QueuedPayload,
  answersClaim: string | undefined,
): Promise<VerifiedItem> {
  const event = payload.envelope as unknown as KybEvent | UnknownKybEvent;
  const envelope = event as unknown as Envelope;
  const context = new DeliveryContext(
    payload.authentication,
    payload.claims,
    payload.deliveryAttempt,
    envelope.api_version,
  );
  context.job = { id: job.id, attempt: job.attempt, enqueuedAt: job.enqueuedAt };
  const answers = payload.claims && locateReleasedAnswerList(payload.claims, answersClaim);
  await withAnswers(context, envelope, payload.claims, answers);
  return { envelope, event, context, dedupeKey: job.event.key, typed: payload.typed };
}
