/**
 * Runs the example app as a real server. Configure it through the environment:
 *   KYB_SECRET_V1 (and KYB_SECRET_V2 … during a rotation), KYB_ATTESTATION_ISSUER, KYB_AUDIENCE, KYB_JWKS_URL, PORT.
 */
import { createReceiver } from '@kyb-webhooks/core';
import { createApp } from './app.js';
import { registerDemoHandlers } from './handlers.js';

const secrets = Object.fromEntries(
  Object.entries(process.env)
    .filter(([name, value]) => /^KYB_SECRET_V\d+$/.test(name) && value)
    .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value as string]),
);
const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = process.env;

const receiver = createReceiver({
  secrets,
  attestation: issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : undefined,
  logger: (entry) => {
    if (entry.level !== 'debug') console.log(JSON.stringify({ level: entry.level, msg: entry.message, code: entry.code, event_id: entry.eventId, detail: entry.detail }));
  },
});
const activity = registerDemoHandlers(receiver);
receiver.onAny((event) => {
  // Runs after the typed handler was registered; the map entry is written by then in this demo.
  queueMicrotask(() => console.log(`${event.event} ${event.event_id}: ${activity.get(event.event_id) ?? 'no handler'}`));
});

const port = Number(process.env.PORT ?? 3000);
createApp(receiver).listen(port, '127.0.0.1', () => {
  console.log(`KYB webhooks example listening on http://127.0.0.1:${port}/webhooks/kyb`);
});
