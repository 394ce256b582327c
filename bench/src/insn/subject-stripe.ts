/** Stripe's `constructEvent` and the same bounded `Map` (`../http/peer.ts`), on a Stripe-format header for the same bytes. */
import { createStripeReceiver } from '../http/peer.js';
import type { Answer, InsnKind, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup, kind: InsnKind): Answer {
  if (kind !== 'hmac') throw new Error('Stripe verifies an HMAC only; it has no attested run');
  const answer = createStripeReceiver(setup.stripeSecret);
  return (delivery) => answer(delivery.stripeSignature, delivery.body);
}
