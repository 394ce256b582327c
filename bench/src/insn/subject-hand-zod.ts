/**
 * The hand-written receiver (`subject-hand.ts`) plus the spec's envelope and event-data rules, checked the way a
 * careful user would write them: zod, on the schemas `@kyb-webhooks/core/schemas` publishes. Information for issue
 * 28: the hand-written receiver checks no field, ours checks every one, and this one checks the same ones as ours.
 * Attested, it adds the hand-written spec 5.5 check of `subject-hand.ts`.
 */
import { envelopeSchema, eventDataSchemas } from '@kyb-webhooks/core/schemas';
import { benchNow } from '../clock.js';
import { createAttestationCheck, createHandwrittenReceiver } from '../http/baseline.js';
import type { Answer, InsnKind, ProgramSetup } from './protocol.js';

const dataSchemas: Record<string, { safeParse(value: unknown): { success: boolean } } | undefined> = eventDataSchemas;

/** The envelope's fields, then the data of a known event type (an unknown type's data is not checked, as in ours). */
function checkSpecRules(envelope: Record<string, unknown>): boolean {
  if (!envelopeSchema.safeParse(envelope).success) return false;
  const data = dataSchemas[envelope['event'] as string];
  return data === undefined || data.safeParse(envelope['data']).success;
}

export function create(setup: ProgramSetup, kind: InsnKind): Answer {
  if (kind === 'ordered') throw new Error('hand-zod has no ordered run');
  const attestation =
    kind === 'attested'
      ? createAttestationCheck(setup.jwks, { issuer: setup.issuer, audience: setup.audience, now: benchNow })
      : undefined;
  const checkEnvelope = attestation
    ? (envelope: Record<string, unknown>) => checkSpecRules(envelope) && attestation(envelope)
    : checkSpecRules;
  const answer = createHandwrittenReceiver(setup.secrets, { keyPerRequest: false, checkEnvelope });
  return (delivery) => answer(delivery.headers['service-kyb-signature'], delivery.body);
}
