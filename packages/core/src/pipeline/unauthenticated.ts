/**
 * Deliveries nothing authenticates (spec 5.4): on a receiver without `secrets`, events that carry no attestation.
 * They may be forged, so they never touch the dedupe store and never reach `on`, `onAny` or `onUnknown`.
 */
import { parseAttempt } from './checks.js';
import { DeliveryContext, HandlerError, type HandlerRegistry, type UnauthenticatedContext } from './dispatch.js';
import type { Envelope } from '../events/envelope.js';
import { rejection } from '../errors.js';
import { readHeader } from '../http/headers.js';
import type { Logger } from '../log/logger.js';
import type { ReceiveInput, ReceiveResult } from '../receiver-types.js';
import { answerUnauthenticated, reject } from './outcomes.js';
import { HANDLED, type RunHandlers } from './run-handlers.js';

const UNAUTHENTICATED = Object.freeze({ hmac: null, attestation: false as const });

/**
 * Creates the path of an unauthenticated delivery. It is answered 200 `unauthenticated` so that the service neither
 * retries it for hours nor holds the stream behind it, and runs only the `onUnauthenticated` handlers.
 */
export function createUnauthenticatedReceive(
  handlers: HandlerRegistry,
  runHandlers: RunHandlers,
  logger: Logger | undefined,
): (envelope: Envelope, input: ReceiveInput) => Promise<ReceiveResult> {
  return async function receiveUnauthenticated(envelope: Envelope, input: ReceiveInput): Promise<ReceiveResult> {
    if (handlers.unauthenticated.length > 0) {
      const context = new DeliveryContext(
        UNAUTHENTICATED,
        undefined,
        parseAttempt(readHeader(input.headers, 'service-delivery-attempt')),
        envelope.api_version,
      );
      const outcome = await runHandlers(
        () => handlers.runUnauthenticated(envelope, context as unknown as UnauthenticatedContext),
        context,
        envelope,
      );
      if (outcome instanceof HandlerError)
        return reject(logger, rejection('handler_failed', undefined, outcome), envelope);
      if (outcome !== HANDLED) {
        outcome.stillRunning.then(undefined, () => {});
        return reject(logger, 'handler_timeout', envelope);
      }
    }
    return answerUnauthenticated(logger, envelope);
  };
}
