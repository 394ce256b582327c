/**
 * The README's demo: starts the example app on 127.0.0.1 with the memory store, a test JWKS server and a test
 * signer standing in for the service, plays the scenario and prints what happened to each delivery.
 */
import type { AddressInfo } from 'node:net';
import { createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, startJwksServer } from '@kyb-webhooks/testing';
import { createApp } from './app.js';
import { registerDemoHandlers } from './handlers.js';
import { formatScenarioTable, runDemoScenario } from './scenario.js';

const signer = await createTestSigner();
const jwks = await startJwksServer(signer.jwks);
const receiver = createReceiver({
  secrets: { ...signer.secrets },
  attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwks.url },
});
const activity = registerDemoHandlers(receiver);
const server = createApp(receiver).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`;

try {
  console.log(`Express example on ${url} (memory store); the service is played by the test kit.\n`);
  console.log(formatScenarioTable(await runDemoScenario({ url, signer, activity })));
} finally {
  server.close();
  await jwks.close();
}
