/** The fixture file a callgrind program reads: the receivers' setup and signed deliveries (bodies in base64). */
import { writeFileSync } from 'node:fs';
import type { SignedDelivery, TestSigner } from '@kyb-webhooks/testing';
import { benchEvent, padEnvelope } from '../fixtures.js';
import { stripeHeaderFor } from '../http/stripe-header.js';
import type { Fixture, ProgramSetup } from './protocol.js';

/** What every receiver is configured with, from the test kit's signer. */
export function setupOf(signer: TestSigner): ProgramSetup {
  return {
    secrets: { ...signer.secrets },
    stripeSecret: signer.secrets[signer.currentVersion]!,
    issuer: signer.issuer,
    audience: signer.audience,
    jwks: signer.jwks,
  };
}

/** Writes `deliveries` with their Stripe-format headers (same bytes, same secret) to `path`. */
export function writeFixture(path: string, setup: ProgramSetup, deliveries: readonly SignedDelivery[]): void {
  const fixture: Fixture = {
    setup,
    deliveries: deliveries.map((delivery) => ({
      headers: delivery.headers,
      body: Buffer.from(delivery.body).toString('base64'),
      stripeSignature: stripeHeaderFor(delivery.headers['service-kyb-signature']!),
    })),
  };
  writeFileSync(path, JSON.stringify(fixture));
}

/** The stream of {@link signOrderedPool}. */
export const ORDERED_STREAM = 'dr_insn_bench_stream';

/**
 * `count` HMAC-signed deliveries of one stream, seq 0, 1, 2, … in order, each padded to `targetBytes`: what ordering
 * `enforce` sees from a stream that never has a gap.
 *
 * @example
 * ```ts
 * const pool = await signOrderedPool(signer, 1_000, 1024)
 * ```
 */
export async function signOrderedPool(
  signer: TestSigner,
  count: number,
  targetBytes: number,
): Promise<SignedDelivery[]> {
  const pool: SignedDelivery[] = [];
  for (let seq = 0; seq < count; seq++)
    pool.push(
      await signer.sign(padEnvelope({ ...benchEvent('hmac', seq), stream_id: ORDERED_STREAM, seq }, targetBytes)),
    );
  return pool;
}
