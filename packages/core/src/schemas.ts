/**
 * `@kyb-webhooks/core/schemas`: the zod schemas of the webhook envelope and of each event's data (spec 2.3 to 2.7 and
 * §6), written with `zod/mini` (zod's tree-shakable build: `parse`, `safeParse`, and zod/mini's functions to compose
 * them), and the synchronous helpers built on them. The receiver does not need this entry: it accepts a valid delivery
 * by the schemas' generated plans and loads zod only to explain a rejection, so an application that never imports
 * this entry never pays for zod at start-up (about 240 M instructions on Node).
 *
 * @example
 * ```ts
 * import { eventDataSchemas } from '@kyb-webhooks/core/schemas'
 *
 * const data = eventDataSchemas['kyb.data_request.refused'].parse(stored.data) // { reason, … }
 * ```
 */
export { envelopeSchema } from './events/envelope.js';
export {
  eventDataSchemas,
  timestampSchema,
  priceSchema,
  priceLineSchema,
  chargeSchema,
  releasedAnswerSchema,
  releasedAnswerListSchema,
  approvalSchema,
} from './events/events.js';
export { answersFromClaims, findReleasedAnswerList } from './events/answers-from-claims.js';
