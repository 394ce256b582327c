/*
 * The event types of spec §6 and what the spec says of them, in a module without zod: the receiver's hot path and
 * the root entry do not load zod (see schema-plan.ts). The known types are those of the generated schema plans, which
 * are read from `eventDataSchemas` (events.ts), so a type added there is known here once the plans are regenerated.
 */
import type { KnownEventType, KybEvent, UnknownKybEvent } from './events.js';
import { DATA_VERDICTS } from './schema-plans.generated.js';

/**
 * The event types of spec §6.
 *
 * @example
 * ```ts
 * for (const type of KNOWN_EVENT_TYPES) receiver.on(type, audit)
 * ```
 */
export const KNOWN_EVENT_TYPES = Object.keys(DATA_VERDICTS) as KnownEventType[];

/**
 * Types the spec marks attested: a delivery of one of these without an attestation is rejected.
 *
 * @example
 * ```ts
 * ATTESTED_EVENT_TYPES.has('kyb.data_request.released') // true
 * ```
 */
export const ATTESTED_EVENT_TYPES: ReadonlySet<string> = new Set<KnownEventType>([
  'kyb.data_request.released',
  'kyb.business.wallet_address_changed',
]);

/**
 * Whether `type` is an event type this library version knows (has a data schema for).
 *
 * @example
 * ```ts
 * isKnownEventType('kyb.data_request.released') // true
 * isKnownEventType('kyb.business.sanctions_flagged') // false: verified all the same, handled by onUnknown
 * ```
 */
export function isKnownEventType(type: string): type is KnownEventType {
  return Object.hasOwn(DATA_VERDICTS, type);
}

/**
 * Whether an event handed to `onAny` is of a type this library version knows, narrowing it to {@link KybEvent}, the
 * union that then narrows by `event.event`. Needed because `onAny` also receives verified events of new types: their
 * `event` is any string, and TypeScript cannot narrow a union one of whose members has a plain `string` tag.
 *
 * @example
 * ```ts
 * receiver.onAny((event) => {
 *   if (!isKnownEvent(event)) return audit.unknown(event.event)
 *   switch (event.event) {
 *     case 'kyb.data_request.released': return audit.released(event.data.field_count)
 *     case 'kyb.data_request.refused': return audit.refused(event.data.reason)
 *   }
 * })
 * ```
 */
export function isKnownEvent(event: KybEvent | UnknownKybEvent): event is KybEvent {
  return typeof event?.event === 'string' && isKnownEventType(event.event);
}
