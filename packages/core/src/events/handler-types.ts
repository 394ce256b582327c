import { describeValue, editDistance } from '../option-words.js';
import { EVENT_TYPE_PATTERN } from './patterns.js';
import { KybWebhookError } from '../errors.js';
import type { KnownEventType } from './events.js';
import { isKnownEventType, KNOWN_EVENT_TYPES } from './event-types.js';

/*
 * What receiver.on() takes as a type, checked at run time because plain JavaScript has no types to catch a typo and
 * a misspelt name would otherwise register a handler that silently never runs:
 * - a known type (spec §6);
 * - a type this version does not know yet, in the shape every known type has: `kyb.<resource>.<action>`, both parts
 *   lower-case snake_case (a new attested type can be handled by name before an upgrade);
 * - but never a near miss of a known type: ignoring case, the characters between words and a `kyb` prefix, a name
 *   within MAX_NEAR_MISS_EDITS edits of a known one, or one that contains a known one or is part of one (words added
 *   or cut off). Such a name is far likelier a typo than a new type; it is refused with "did you mean".
 * A genuinely new type caught by the near-miss rule can still be handled in onAny, by its `event.event`.
 */
const WELL_FORMED_EVENT_TYPE = /^kyb\.[a-z][a-z0-9]*(?:_[a-z0-9]+)*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
// Two, not one: typos come in pairs ("kyb.data_reqest.relesed"), and the known types are at least 3 edits apart, so
// two edits never make one known type look like another.
const MAX_NEAR_MISS_EDITS = 2;

/** Lower-case letters and digits only, without a leading `kyb`: what is left to compare once separators and case go. */
function skeleton(type: string): string {
  const letters = type.toLowerCase().replace(/[^a-z0-9]/g, '');
  return letters.startsWith('kyb') ? letters.slice(3) : letters;
}

const KNOWN_SKELETONS: readonly (readonly [KnownEventType, string])[] = KNOWN_EVENT_TYPES.map((type) => [
  type,
  skeleton(type),
]);

/**
 * The known event type a name not among them most likely meant (see the rule above), or undefined when the name is
 * not a near miss of any.
 *
 * @example
 * ```ts
 * nearestKnownEventType('data_request.released')     // 'kyb.data_request.released' (no kyb. prefix)
 * nearestKnownEventType('kyb.data_request.release')  // 'kyb.data_request.released' (one edit)
 * nearestKnownEventType('kyb.data_request.archived') // undefined: a plausible new type
 * ```
 */
export function nearestKnownEventType(type: string): KnownEventType | undefined {
  const wanted = skeleton(type);
  if (wanted.length === 0) return undefined;
  let nearest: KnownEventType | undefined;
  let nearestScore = Number.POSITIVE_INFINITY;
  for (const [known, candidate] of KNOWN_SKELETONS) {
    const edits = editDistance(wanted, candidate);
    const overlaps = wanted.includes(candidate) || candidate.includes(wanted);
    if (edits > MAX_NEAR_MISS_EDITS && !overlaps) continue;
    // Among several near misses the fewest edits win; among names with words added or cut off ("kyb.request.refused"
    // is part of both refusals), the closest in length.
    const score = edits <= MAX_NEAR_MISS_EDITS ? edits : Math.abs(wanted.length - candidate.length);
    if (score < nearestScore) {
      nearest = known;
      nearestScore = score;
    }
  }
  return nearest;
}

/**
 * The event types a `receiver.on(type | [types], handler)` call registers, checked at registration so a mistake
 * fails at start-up with `config_invalid` rather than as a handler that silently never runs: each must be a known
 * type, or a type this version does not know in the known types' shape `kyb.<resource>.<action>` (lower-case
 * snake_case) that is not a near miss of a known one (`'data_request.released'`, `'kyb.data_request.release'`,
 * `'KYB.Data_Request.Released'` are refused with "did you mean 'kyb.data_request.released'?").
 *
 * @example
 * ```ts
 * handlerTypes(['kyb.data_request.released', 'kyb.data_request.refused'], handler) // both names
 * handlerTypes('kyb.data_request.archived', handler)                             // a new type: ['kyb.data_request.archived']
 * handlerTypes('kyb.data_request.release', handler)                              // throws config_invalid: did you mean …?
 * ```
 */
export function handlerTypes(type: unknown, handler: unknown): readonly string[] {
  if (typeof handler !== 'function') {
    throw new KybWebhookError(
      'config_invalid',
      `receiver.on(type, handler): the handler must be a function; got ${describeValue(handler)}.`,
    );
  }
  const types: readonly unknown[] = Array.isArray(type) ? type : [type];
  if (types.length === 0) {
    throw new KybWebhookError(
      'config_invalid',
      'receiver.on([], handler): name at least one event type, or use receiver.onAny(handler).',
    );
  }
  for (const each of types) {
    if (typeof each === 'string' && isKnownEventType(each)) continue;
    const shown = typeof each === 'string' ? JSON.stringify(each.slice(0, 80)) : describeValue(each);
    const meant = typeof each === 'string' ? nearestKnownEventType(each) : undefined;
    if (meant !== undefined) {
      throw new KybWebhookError(
        'config_invalid',
        `receiver.on: ${shown} is not an event type: did you mean '${meant}'? ` +
          '(If it is a new type this version does not know yet, handle it in receiver.onAny and check event.event.)',
      );
    }
    if (typeof each !== 'string' || !EVENT_TYPE_PATTERN.test(each) || !WELL_FORMED_EVENT_TYPE.test(each)) {
      throw new KybWebhookError(
        'config_invalid',
        `receiver.on: ${shown} is not an event type; pass a name such as 'kyb.data_request.released' (a type this version ` +
          'does not know yet in the same shape, kyb.<resource>.<action> in lower-case snake_case) or a list of them.',
      );
    }
  }
  return types as readonly string[];
}
