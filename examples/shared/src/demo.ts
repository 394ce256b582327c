import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, startJwksServer } from '@kyb-webhooks/testing';
import { registerDemoHandlers } from './handlers.js';
import { formatScenarioTable, runDemoScenario } from './scenario.js';

/** A running example app: the webhook URL and how to stop it. */
export interface ServedApp {
  url: string;
  close(): Promise<void>;
}

/**
 * The README's demo for one framework: starts the example app on 127.0.0.1 with the memory store, a test JWKS
 * server and a test signer standing in for the service, plays the scenario and prints what happened to each delivery.
 */
export async function runDemo(framework: string, serve: (receiver: Receiver) => Promise<ServedApp>): Promise<void> {
  const signer = await createTestSigner();
  const jwks = await startJwksServer(signer.jwks);
  const receiver = createReceiver({
    secrets: { ...signer.secrets },
    attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwks.url },
  });
  const activity = registerDemoHandlers(receiver);
  const app = await serve(receiver);
  try {
    console.log(`${framework} example on ${app.url} (memory store); the service is played by the test kit.\n`);
    console.log(formatScenarioTable(await runDemoScenario({ url: app.url, signer, activity })));
  } finally {
    await app.close();
    await jwks.close();
  }
}

/** Waits for a Node HTTP server on 127.0.0.1 (port 0 = a free one) and describes it as a {@link ServedApp}. */
export async function listening(server: import('node:http').Server, path = '/webhooks/kyb'): Promise<ServedApp> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
