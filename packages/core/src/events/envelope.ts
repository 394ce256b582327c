import * as z from 'zod/mini';
import { EVENT_TYPE_PATTERN, ULID_PATTERN } from './patterns.js';
import { isDataObject } from './predicates.js';

export { EVENT_TYPE_PATTERN, ULID_PATTERN } from './patterns.js';

/**
 * The webhook envelope of spec 2.3. Unknown top-level fields are kept: the service may add fields without notice.
 *
 * @example
 * ```ts
 * const parsed = envelopeSchema.safeParse(JSON.parse(text))
 * if (parsed.success) console.log(parsed.data.event_id)
 * ```
 */
export const envelopeSchema = z.looseObject({
  // Printable ASCII without spaces: a type that differs from a known one only by case is still a different type,
  // but NUL, whitespace, control characters and Unicode look-alikes are never part of one.
  event: z.string().check(z.regex(EVENT_TYPE_PATTERN, 'printable ASCII without spaces, at most 200 characters')),
  event_id: z.string().check(z.regex(ULID_PATTERN, 'a 26-character ULID')),
  stream_id: z.string().check(z.minLength(1), z.maxLength(500)),
  seq: z.number().check(z.int(), z.nonnegative(), z.lte(Number.MAX_SAFE_INTEGER)),
  timestamp: z.number().check(z.int(), z.nonnegative()),
  api_version: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'a date-shaped version YYYY-MM-DD')),
  // Only "an object" here: each event type's own schema checks data right after, so walking it twice is waste.
  data: z.custom<Record<string, unknown>>(isDataObject, { message: 'data must be an object' }),
  attestation: z.optional(z.string().check(z.minLength(1))),
});

/** A validated envelope whose `data` has not been checked against its event type yet. */
export type Envelope = z.infer<typeof envelopeSchema>;
