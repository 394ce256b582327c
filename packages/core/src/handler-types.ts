import { describeValue } from './config.js';
import { EVENT_TYPE_PATTERN } from './envelope.js';
import { KybWebhookError } from './errors.js';

/**
 * The event types a `receiver.on(type | [types], handler)` call registers, checked at registration so a mistake
 * fails at start-up with `config_invalid` rather than as a handler that silently never runs. A type this library
 * version does not know is allowed (a new attested type can be handled by name before an upgrade); it only has to
 * be a type a delivery could carry.
 *
 * @example
 * ```ts
 * handlerTypes(['kyb.data_request.released', 'kyb.data_request.refused'], handler) // both names
 * handlerTypes('kyb.data_request.released', handler)                             // ['kyb.data_request.released']
 * ```
 */
export function handlerTypes(type: unknown, handler: unknown): readonly string[] {
  if (typeof handler !== 'function') {
    throw new KybWebhookError('config_invalid', `receiver.on(type, handler): the handler must be a function; got ${describeValue(handler)}.`);
  }
  const types: readonly unknown[] = Array.isArray(type) ? type : [type];
  if (types.length === 0) {
    throw new KybWebhookError('config_invalid', 'receiver.on([], handler): name at least one event type, or use receiver.onAny(handler).');
  }
  for (const each of types) {
    if (typeof each !== 'string' || !EVENT_TYPE_PATTERN.test(each)) {
      throw new KybWebhookError(
        'config_invalid',
        `receiver.on: ${typeof each === 'string' ? JSON.stringify(each.slice(0, 80)) : describeValue(each)} is not an event type; pass a name such as 'kyb.data_request.released' ` +
          '(printable ASCII without spaces) or a list of them.',
      );
    }
  }
  return types as readonly string[];
}
