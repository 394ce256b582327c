import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { BENCH_NOW_MS } from '../fixtures.js';
import { createStripeReceiver } from './peer.js';
import { stripeHeaderFor } from './stripe-header.js';

const signer = await createTestSigner({ now: BENCH_NOW_MS });
const secret = signer.secrets[signer.currentVersion]!;
const delivery = await signer.sign(testEvents.dataRequestPendingApproval());
const stripeHeader = stripeHeaderFor(delivery.headers['service-kyb-signature']!);

describe('stripeHeaderFor', () => {
  it("is the header Stripe's own generateTestHeaderString makes for the same bytes, secret and time", () => {
    const t = Number(/t=(\d+)/.exec(stripeHeader)![1]);
    const stripe = new Stripe('sk_test_kyb_bench_no_requests');
    expect(stripeHeader).toBe(
      stripe.webhooks.generateTestHeaderString({ payload: delivery.text, secret, timestamp: t }),
    );
  });
});

describe('createStripeReceiver', () => {
  it('answers 200 to the delivery with its Stripe-format header', () => {
    expect(createStripeReceiver(secret)(stripeHeader, Buffer.from(delivery.body))).toBe(200);
  });

  it('answers 401 when the header was made with another secret', () => {
    const forged = stripeHeaderFor(signer.hmacHeader(delivery.body, { secret: 'whsec_forged' }));
    expect(createStripeReceiver(secret)(forged, Buffer.from(delivery.body))).toBe(401);
  });
});
