/**
 * The hand-written receiver of the HTTP section (`../http/baseline.ts`): header parse, skew, HMAC, constant-time
 * compare, `JSON.parse`, a bounded `Map` of event ids. For attested deliveries it adds what spec 5.5 asks, by hand:
 * `typ`, RS256, one `crypto.verify`, the claims and the binding (`createAttestationCheck`).
 */
import { benchNow } from '../clock.js';
import { createAttestationCheck, createHmacCheck, createSeenEvents } from '../http/baseline.js';
import type { Answer, InsnKind, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup, kind: InsnKind): Answer {
  const checkHmac = createHmacCheck(setup.secrets);
  const firstTime = createSeenEvents(false);
  const checkAttestation =
    kind === 'attested'
      ? createAttestationCheck(setup.jwks, { issuer: setup.issuer, audience: setup.audience, now: benchNow })
      : undefined;
  return (delivery) => {
    if (!checkHmac(delivery.headers['service-kyb-signature'], delivery.body)) return 401;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(delivery.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return 400;
    }
    if (typeof event['event_id'] !== 'string') return 400;
    if (checkAttestation && !checkAttestation(event)) return 401;
    firstTime(event['event_id']);
    return 200;
  };
}
