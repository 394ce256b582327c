/**
 * What the bench hands a program it runs under callgrind (`program.ts`), and what a subject (a receiver under
 * measurement, `subject-*.ts`) is. Types only: the programs are bundled apart from the bench.
 */
import type { JSONWebKeySet } from 'jose';

/**
 * The receivers measured: the hand-written one, the hand-written one with the spec's schemas through zod, Stripe's `constructEvent`, ours through `receive()` and through the
 * fetch handler, ours with ordering `enforce`, and the hand-written one and ours inside a Fastify app driven in
 * process by `inject()`; and ours with a telemetry layer (issue 30): `openTelemetry()` with no provider registered, on
 * the real SDK, and with a subscriber on the `kyb-webhooks:receive` tracing channel.
 */
export const SUBJECTS = [
  'hand',
  'hand-zod',
  'stripe',
  'ours',
  'ours-fetch',
  'ours-enforce',
  'hand-fastify',
  'ours-fastify',
  'ours-otel-noop',
  'ours-otel-sdk',
  'ours-channel',
] as const;
export type SubjectName = (typeof SUBJECTS)[number];

/** What the receivers are configured with: the test kit signer's secrets and attestation settings. */
export interface ProgramSetup {
  secrets: Record<string, string>;
  /** The secret Stripe's `constructEvent` checks `stripeSignature` with (the current version's). */
  stripeSecret: string;
  issuer: string;
  audience: string;
  jwks: JSONWebKeySet;
}

/** One delivery as the fixture file holds it; `body` is base64. */
export interface FixtureDelivery {
  headers: Record<string, string>;
  body: string;
  /** The Stripe-format header for the same bytes and secret (`t=…,v1=…`). */
  stripeSignature: string;
}

export interface Fixture {
  setup: ProgramSetup;
  deliveries: FixtureDelivery[];
}

/** A delivery as a subject receives it: the body decoded before the measured work starts. */
export interface ProgramDelivery {
  headers: Record<string, string>;
  body: Buffer;
  stripeSignature: string;
}

/** HMAC only, HMAC + RS256 attestation, or HMAC only on one stream whose seqs follow each other from 0. */
export type InsnKind = 'hmac' | 'attested' | 'ordered';

/** A receiver ready to answer: the HTTP status it would send. */
export type Answer = (delivery: ProgramDelivery) => number | Promise<number>;

/** What every `subject-*.ts` exports. */
export interface Subject {
  create(setup: ProgramSetup, kind: InsnKind): Answer | Promise<Answer>;
}

/**
 * One run of the program: read `fixture`; unless the subject is `none`, import it; unless `importOnly`, create it
 * and answer the first `count` deliveries (each must be a 200 that handled the event).
 */
export interface RunSpec {
  subject: SubjectName | 'none';
  kind: InsnKind;
  fixture: string;
  count: number;
  importOnly: boolean;
}
