/** What the bench parent and its HTTP server processes agree on. */
import type { ReceiverConfig } from '../receiver.js';

export const FRAMEWORKS = ['express', 'fastify', 'koa', 'hono'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/**
 * The endpoints, each in server processes of its own:
 * - `handwritten`: what a careful hand-written receiver does: the framework's raw body, HMAC over "<t>." + bytes
 *   compared in constant time, JSON.parse, a bounded Map for dedupe on event_id, 200;
 * - `handwritten-attested`: the same, fed the attested pool (it does not verify the attestation);
 * - `handwritten-verify`: `handwritten-attested` plus one raw crypto.verify of the token (key by kid, nothing else):
 *   its cost over `handwritten-attested` is what that verify costs inside a server under the same load;
 * - `adapter`: our adapter, as a user sets it up (default memory store), HMAC-only events;
 * - `adapter-attested`: our adapter on the attested pool (see `perRequestKeyStore`);
 * - `stripe`: the peer a user would otherwise pick, Stripe's `constructEvent` (its own header and HMAC over the same
 *   bytes with the same secret) plus the same Map dedupe; Express and Fastify only.
 */
export const VARIANTS = [
  'handwritten',
  'handwritten-attested',
  'handwritten-verify',
  'adapter',
  'adapter-attested',
  'stripe',
] as const;
export type Variant = (typeof VARIANTS)[number];

/** Frameworks with a `stripe` endpoint: the ones Stripe's own webhook docs show. */
export const PEER_FRAMEWORKS: readonly Framework[] = ['express', 'fastify'];

export function variantsOf(framework: Framework): Variant[] {
  return VARIANTS.filter((variant) => variant !== 'stripe' || PEER_FRAMEWORKS.includes(framework));
}

export const WEBHOOK_PATH = '/webhooks/kyb';
/** The header the `stripe` endpoint reads; every request carries it beside Service-KYB-Signature. */
export const STRIPE_HEADER = 'stripe-signature';

/** Passed to the server in the `KYB_BENCH_SERVER` environment variable (JSON). */
export interface ServerConfig extends ReceiverConfig {
  path: string;
  /** The secret the signer signs with (its current version): the one `stripe` endpoint's constructEvent gets. */
  peerSecret: string;
}

export type ParentMessage = { type: 'cpu'; id: number };
export type ServerMessage =
  | { type: 'ready'; port: number }
  | { type: 'error'; message: string }
  | { type: 'cpu'; id: number; user: number; system: number };
