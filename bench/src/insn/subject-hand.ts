/**
 * The hand-written receiver of the HTTP section (`../http/baseline.ts`): header parse, skew, HMAC, constant-time
 * compare, `JSON.parse`, a bounded `Map` of event ids. For attested deliveries it adds what spec 5.5 asks, by hand:
 * `typ`, RS256, one `crypto.verify`, the claims and the binding (`createAttestationCheck`).
 */
import { benchNow } from '../clock.js';
import { createAttestationCheck, createHandwrittenReceiver } from '../http/baseline.js';
import type { Answer, InsnKind, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup, kind: InsnKind): Answer {
  const answer = createHandwrittenReceiver(setup.secrets, {
    keyPerRequest: false,
    ...(kind === 'attested'
      ? {
          checkEnvelope: createAttestationCheck(setup.jwks, {
            issuer: setup.issuer,
            audience: setup.audience,
            now: benchNow,
          }),
        }
      : {}),
  });
  return (delivery) => answer(delivery.headers['service-kyb-signature'], delivery.body);
}
