/**
 * A1: the HMAC header check plus the JSON parse of the verified bytes, as the receiver does them, against the
 * plain node:crypto way and against Stripe's constructEvent.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createSignatureVerifier } from '@kyb-webhooks/core';
import Stripe from 'stripe';
import { platformCrypto as webCrypto } from '../../../packages/core/src/verify/crypto/web.js';
import { benchNow } from '../fixtures.js';
import type { Candidate } from '../harness.js';

export const SIGNATURE_NAMES = {
  baseline: 'node:crypto createHmac + timingSafeEqual + JSON.parse (baseline)',
  ours: 'ours: createSignatureVerifier (node:crypto) + parse',
  web: 'ours with Web Crypto (info)',
  stripe: 'stripe.webhooks.constructEvent',
} as const;

export interface SignatureInputs {
  /** The exact body bytes (a Buffer, as Node frameworks hand them over). */
  body: Buffer;
  secret: string;
  version: string;
  /** Service-KYB-Signature for `body`, t = the bench clock. */
  header: string;
}

function stripeHeader(body: Buffer, secret: string): string {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret)
    .update(`${t}.${body.toString('utf8')}`)
    .digest('hex');
  return `t=${t},v1=${v1}`;
}

export function signatureCandidates({ body, secret, version, header }: SignatureInputs): Candidate[] {
  const secrets = { [version]: secret };
  const ours = createSignatureVerifier({ secrets, toleranceSeconds: 300, now: benchNow });
  const web = createSignatureVerifier({ secrets, toleranceSeconds: 300, now: benchNow, crypto: webCrypto });
  // The receiver's own decoder: fatal, so bytes that are not UTF-8 are refused instead of replaced.
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const stripe = new Stripe('sk_test_bench');
  const stripeSignature = stripeHeader(body, secret);

  const baseline = (): unknown => {
    // The least a hand-written receiver does: pick t and v1, MAC "<t>." + bytes, compare in constant time, parse.
    const fields = header.split(',');
    const t = fields[0]!.slice(2);
    const expected = Buffer.from(fields[1]!.slice(3), 'hex');
    const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw new Error('mismatch');
    return JSON.parse(body.toString('utf8'));
  };

  return [
    { name: SIGNATURE_NAMES.baseline, fn: baseline },
    {
      name: SIGNATURE_NAMES.ours,
      async: true,
      fn: async () => {
        await ours(header, body);
        return JSON.parse(utf8.decode(body));
      },
    },
    {
      name: SIGNATURE_NAMES.web,
      async: true,
      fn: async () => {
        await web(header, body);
        return JSON.parse(utf8.decode(body));
      },
    },
    { name: SIGNATURE_NAMES.stripe, fn: () => stripe.webhooks.constructEvent(body, stripeSignature, secret) },
  ];
}

/** Each candidate once, outside the timing, so a broken setup fails loudly instead of timing exceptions. */
export async function checkCandidates(candidates: readonly Candidate[]): Promise<void> {
  for (const candidate of candidates) {
    try {
      await candidate.fn();
    } catch (error) {
      throw new Error(
        `bench candidate "${candidate.name}" fails: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
