import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { registerDemoHandlers, type Activity } from './handlers.js';

// Used only when no KYB_SECRET_V<n> is set, so `pnpm start` works out of the box on a developer's machine.
const DEVELOPMENT_SECRET = 'whsec_development_only_do_not_use_in_production';

/**
 * The receiver of `pnpm start`, configured from the environment: KYB_SECRET_V1 (and KYB_SECRET_V2 … during a
 * rotation), and for attested events KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL.
 */
export function receiverFromEnv(env: NodeJS.ProcessEnv = process.env): { receiver: Receiver; activity: Activity } {
  let secrets: Record<string, string> = Object.fromEntries(
    Object.entries(env)
      .filter(([name, value]) => /^KYB_SECRET_V\d+$/.test(name) && value)
      .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value as string]),
  );
  if (Object.keys(secrets).length === 0) {
    console.warn(`No KYB_SECRET_V<n> set: using the development secret "${DEVELOPMENT_SECRET}" as version 1.`);
    secrets = { '1': DEVELOPMENT_SECRET };
  }
  const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = env;
  // All three or none: with only some, the app would start and answer every attested event 500
  // attestation_not_configured, which looks like a bug in the app rather than a missing variable.
  const attestationVariables = { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl };
  const unset = Object.entries(attestationVariables)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (unset.length > 0 && unset.length < 3) {
    throw new Error(
      `Set ${unset.join(' and ')} too, or none of the three attestation variables: with only some, attested events cannot be verified.`,
    );
  }
  const receiver = createReceiver({
    secrets,
    attestation: issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : undefined,
    logger: (entry) => {
      if (entry.level !== 'debug')
        console.log(
          JSON.stringify({
            level: entry.level,
            msg: entry.message,
            code: entry.code,
            event_id: entry.eventId,
            detail: entry.detail,
          }),
        );
    },
  });
  const activity = registerDemoHandlers(receiver);
  receiver.onAny((event) => {
    // onAny runs beside the typed handler; by the next microtask the typed one has recorded what it did.
    queueMicrotask(() =>
      console.log(`${event.event} ${event.event_id}: ${activity.get(event.event_id) ?? 'no handler'}`),
    );
  });
  return { receiver, activity };
}

/** PORT or 3000. */
export const port = Number(process.env.PORT ?? 3000);
