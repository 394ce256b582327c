/**
 * A4: checking a parsed envelope and its event data, zod's safeParse against the guard the receiver compiles from
 * the same schemas (zod stays the authority for errors; the guard only answers "valid as it is"). The HTTP profile
 * that made the guard worth having showed zod as one of the largest per-request costs; this row keeps the evidence.
 */
import { envelopeSchema, eventDataSchemas } from '@kyb-webhooks/core/schemas';
import type { TestSigner } from '@kyb-webhooks/testing';
import { createValidator } from '../../../packages/core/src/events/schema-guard.js';
import { benchEvent } from '../fixtures.js';
import type { Candidate } from '../harness.js';

export const VALIDATION_NAMES = {
  zod: 'zod safeParse, envelope + pending_approval data (baseline)',
  guard: 'ours: schema guard (zod on failure)',
} as const;

export async function validationCandidates(signer: TestSigner): Promise<Candidate[]> {
  const delivery = await signer.sign(benchEvent('hmac'));
  const parsed: unknown = JSON.parse(delivery.text);
  const dataSchema = eventDataSchemas['kyb.data_request.pending_approval'];
  const validateEnvelope = createValidator(envelopeSchema);
  const validateData = createValidator(dataSchema);
  const ok = (success: boolean): void => {
    if (!success) throw new Error('the bench event must validate');
  };
  return [
    {
      name: VALIDATION_NAMES.zod,
      fn: () => {
        const envelope = envelopeSchema.safeParse(parsed);
        ok(envelope.success && dataSchema.safeParse(envelope.data.data).success);
      },
    },
    {
      name: VALIDATION_NAMES.guard,
      fn: () => {
        const envelope = validateEnvelope(parsed);
        ok(envelope.success && validateData(envelope.data.data).success);
      },
    },
  ];
}
