import type { Receiver } from '@kyb-webhooks/core';

/** What the demo's handlers did, by event_id: the "database" of the demo app. */
export type Activity = Map<string, string>;

function euros(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

/**
 * The demo's business logic: one handler per event type, each recording what it did. A real app would write to
 * its database here; the receiver acknowledges the delivery only after the handler returned.
 */
export function registerDemoHandlers(receiver: Receiver): Activity {
  const activity: Activity = new Map();
  receiver
    .on('kyb.data_request.pending_approval', (event) => {
      const price = event.data.price;
      activity.set(
        event.event_id,
        price ? `reserved ${euros(price.quoted_cents, price.currency)}` : 'waiting for approval (no price)',
      );
    })
    .on('kyb.data_request.released', (event, { answers }) => {
      // Keyed by subject and name together: two directors answering director_name are two answers.
      const directors = answers.byName('director_name').map((answer) => String(answer.value));
      const charge = event.data.charge
        ? `, charged ${euros(event.data.charge.charged_cents, event.data.charge.currency)}`
        : '';
      activity.set(
        event.event_id,
        `stored ${answers.size} answers from ${answers.subjects().length} subjects (directors: ${directors.join(' & ')})${charge}`,
      );
    })
    .on('kyb.data_request.refused', (event) => {
      activity.set(event.event_id, `marked request refused: ${event.data.reason}`);
    })
    .on('kyb.signature_request.pending_approval', (event) => {
      activity.set(event.event_id, `waiting for signature over ${event.data.digest.slice(0, 10)}…`);
    })
    .on('kyb.signature_request.signed', (event) => {
      activity.set(
        event.event_id,
        `stored signature ${event.data.signature.slice(0, 10)}… over ${event.data.digest.slice(0, 10)}…`,
      );
    })
    .on('kyb.signature_request.refused', (event) => {
      activity.set(event.event_id, `marked signature request refused: ${event.data.reason}`);
    })
    .on('kyb.business.wallet_address_changed', (event) => {
      // Spec §6 rule 1: the old address stops resolving at once; never keep it as an alias.
      activity.set(
        event.event_id,
        `replaced wallet ${event.data.previous_wallet_address.slice(0, 8)}… (no alias kept)`,
      );
    })
    .onUnknown((event, { authentication }) => {
      activity.set(event.event_id, `logged verified event of unknown type (attested: ${authentication.attestation})`);
    });
  return activity;
}
