/**
 * The peer: the endpoint a user would write with Stripe's library instead of ours, as Stripe's webhook docs show it:
 * `stripe.webhooks.constructEvent(rawBody, header, secret)` (HMAC over "<t>." + bytes, constant-time compare,
 * JSON.parse), then the same bounded Map dedupe as the hand-written baseline, then 200.
 */
import Stripe from 'stripe';
import { benchNow } from '../clock.js';
import { createSeenEvents, type ManualStatus } from './baseline.js';

/**
 * @example
 * ```ts
 * const answer = createStripeReceiver(secret)
 * answer(req.headers['stripe-signature'], rawBody) // 200 | 400 | 401
 * ```
 */
export function createStripeReceiver(secret: string): (header: string | undefined, body: Buffer) => ManualStatus {
  // No request is ever made: constructEvent is local. The key only satisfies the constructor.
  const stripe = new Stripe('sk_test_kyb_bench_no_requests');
  const firstTime = createSeenEvents(false);
  return (header, body) => {
    let event: unknown;
    try {
      // receivedAt: the bench's pinned clock, which the signatures were made at (Stripe's default tolerance, 300 s).
      event = stripe.webhooks.constructEvent(body, header ?? '', secret, undefined, undefined, benchNow());
    } catch (error) {
      return error instanceof Stripe.errors.StripeSignatureVerificationError ? 401 : 400;
    }
    const eventId = (event as { event_id?: unknown } | null)?.event_id;
    if (typeof eventId !== 'string') return 400;
    firstTime(eventId);
    return 200;
  };
}
