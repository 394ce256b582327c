// zod/mini, zod's tree-shakable build: a bundle that loads these schemas (a Worker refusing a delivery) carries only the
// parts of zod they use, about 27 KB instead of 446 KB. The schemas are zod schemas all the same (parse, safeParse).
import * as z from 'zod/mini';
import type { Envelope } from './envelope.js';
import type { DataRequestRefusalReason } from './refusal-reasons.js';

export type { DataRequestRefusalReason } from './refusal-reasons.js';

/*
 * Event data schemas (spec §2.5–2.7, §3, §6). Rules that shape them:
 * - unknown fields are kept everywhere (looseObject): the service adds fields without notice;
 * - price and charge are optional (requests created before pricing have neither);
 * - where the spec does not show a type (timestamps inside data, for instance) we accept what a reasonable
 *   service sends rather than reject a verified event: Unix seconds or milliseconds, or an ISO 8601 string;
 * - known refusal reasons are a typed union that still accepts new strings.
 */

/**
 * A point in time as the service may send it inside `data`, whose type the spec does not show: Unix seconds or
 * milliseconds (a number or a string of digits), or an ISO 8601 date or date-time. The alternatives never match the
 * same value, so their order changes no outcome, only the work: the date-time, the likeliest string, is tried first.
 *
 * @example
 * ```ts
 * timestampSchema.parse(1763899200)             // Unix seconds
 * timestampSchema.parse('2026-11-23T12:00:00Z') // ISO 8601
 * ```
 */
export const timestampSchema = z.union([
  z.number().check(z.nonnegative()),
  z.iso.datetime({ offset: true, local: true }),
  z.string().check(z.regex(/^\d{1,16}$/)),
  z.iso.date(),
]);
/** See {@link timestampSchema}. */
export type Timestamp = z.infer<typeof timestampSchema>;

/**
 * One billed line of a price or charge (spec 2.5).
 *
 * @example
 * ```ts
 * priceLineSchema.parse({ field: 'director_name', tier: 'pii', cents: 500 })
 * ```
 */
export const priceLineSchema = z.looseObject({
  field: z.string(),
  tier: z.string(),
  cents: z.number().check(z.int()),
});
/** See {@link priceLineSchema}. */
export type PriceLine = z.infer<typeof priceLineSchema>;

/**
 * The amount reserved when a data request waits for approval (spec 2.5).
 *
 * @example
 * ```ts
 * const price = priceSchema.parse(event.data.price) // { quoted_cents, currency, lines }
 * ```
 */
export const priceSchema = z.looseObject({
  quoted_cents: z.number().check(z.int()),
  currency: z.string(),
  lines: z.array(priceLineSchema),
});
/** See {@link priceSchema}. */
export type Price = z.infer<typeof priceSchema>;

/**
 * The actual charge of a release; only released fields are billed (spec 2.5).
 *
 * @example
 * ```ts
 * if (event.data.charge) ledger.add(event.data.charge.charged_cents, event.data.charge.currency)
 * ```
 */
export const chargeSchema = z.looseObject({
  charged_cents: z.number().check(z.int()),
  currency: z.string(),
  lines: z.array(priceLineSchema),
});
/** See {@link chargeSchema}. */
export type Charge = z.infer<typeof chargeSchema>;

/**
 * One released answer (spec 2.6). A director-level field answered by two people is two entries with the same
 * `name` and different `subject`: key on subject and name together.
 *
 * @example
 * ```ts
 * releasedAnswerSchema.parse({ name: 'director_name', subject_type: 'director', subject: '0x9b2e…', value: 'Jane Doe' })
 * ```
 */
export const releasedAnswerSchema = z.looseObject({
  name: z.string(),
  subject_type: z.string(),
  subject: z.string(),
  value: z.unknown(),
});
/** See {@link releasedAnswerSchema}. */
export type ReleasedAnswer = z.infer<typeof releasedAnswerSchema>;

/**
 * A list of released answers, as an attestation's claims carry them.
 *
 * @example
 * ```ts
 * const answers = releasedAnswerListSchema.parse(claims.answers)
 * ```
 */
export const releasedAnswerListSchema = z.array(releasedAnswerSchema);

/**
 * Present only on a successful release (spec 2.7). Votes, tally and threshold are never disclosed.
 *
 * @example
 * ```ts
 * approvalSchema.parse({ approved_at: '2026-11-23T12:00:00Z', action_id: 'act_1', threshold_met: true })
 * ```
 */
export const approvalSchema = z.looseObject({
  approved_at: timestampSchema,
  action_id: z.string(),
  threshold_met: z.boolean(),
});
/** See {@link approvalSchema}. */
export type Approval = z.infer<typeof approvalSchema>;

const reasonSchema = z.string().check(z.minLength(1)) as z.ZodMiniType<DataRequestRefusalReason>;

/**
 * `data` of each event type of spec §6, by event name.
 *
 * @example
 * ```ts
 * const data = eventDataSchemas['kyb.data_request.refused'].parse(envelope.data) // { reason, … }
 * ```
 */
export const eventDataSchemas = {
  'kyb.data_request.pending_approval': z.looseObject({
    request_id: z.optional(z.string()),
    expires_at: timestampSchema,
    price: z.optional(priceSchema),
    offer_id: z.optional(z.string()),
  }),
  'kyb.data_request.released': z.looseObject({
    request_id: z.string(),
    released_at: timestampSchema,
    field_count: z.number().check(z.int(), z.nonnegative()),
    pii_included: z.boolean(),
    attestation_kid: z.string(),
    attestation_expires_at: timestampSchema,
    charge: z.optional(chargeSchema),
    approval: z.optional(approvalSchema),
  }),
  'kyb.data_request.refused': z.looseObject({
    request_id: z.optional(z.string()),
    reason: reasonSchema,
  }),
  'kyb.signature_request.pending_approval': z.looseObject({
    request_id: z.optional(z.string()),
    digest: z.string(),
    message_kind: z.string(),
    created_at: z.optional(timestampSchema),
    expires_at: z.optional(timestampSchema),
  }),
  'kyb.signature_request.signed': z.looseObject({
    request_id: z.optional(z.string()),
    signature: z.string(),
    digest: z.string(),
    signed_at: timestampSchema,
    verification: z.record(z.string(), z.unknown()),
  }),
  'kyb.signature_request.refused': z.looseObject({
    request_id: z.optional(z.string()),
    reason: z.string().check(z.minLength(1)),
    digest: z.string(),
  }),
  'kyb.business.wallet_address_changed': z.looseObject({
    previous_wallet_address: z.string(),
    wallet_address: z.optional(z.string()),
  }),
} as const;

/** Every event type this version of the library knows. Other types are still verified and reach `onUnknown`. */
export type KnownEventType = keyof typeof eventDataSchemas;

/** `data` of event type `T`. */
export type EventData<T extends KnownEventType> = z.infer<(typeof eventDataSchemas)[T]>;

/**
 * A verified event of type `T`: the envelope with `data` validated for its type.
 *
 * @example
 * ```ts
 * function onRelease(event: KybEvent<'kyb.data_request.released'>) {
 *   console.log(event.data.field_count, event.data.charge?.charged_cents)
 * }
 * ```
 */
export type KybEvent<T extends KnownEventType = KnownEventType> = T extends KnownEventType
  ? EnvelopeFields & { event: T; data: EventData<T>; [field: string]: unknown }
  : never;

// Spelled out rather than Omit<Envelope, …>: Omit over the loose object's index signature would turn every
// known field into `unknown`.
interface EnvelopeFields {
  event_id: string;
  stream_id: string;
  seq: number;
  timestamp: number;
  api_version: string;
  attestation?: string;
}

/** A verified event of a type this library version does not know; its data is unchecked. */
export type UnknownKybEvent = Envelope;
