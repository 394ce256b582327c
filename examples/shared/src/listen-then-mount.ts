import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Receiver } from '@kyb-webhooks/core';
import type { ExampleLogin } from './login.js';

/** An example app with its login, listening on `origin`. */
export interface ServedLoginApp {
  origin: string;
  close(): Promise<void>;
}

/**
 * How an example serves itself with its login: it listens first (the redirect URI registered at the login server
 * holds the port), then asks `loginFor(origin)` for the login, then mounts the app. See {@link listenThenMount}.
 */
export type ServeWithLogin = (
  receiver: Receiver,
  loginFor: (origin: string) => Promise<ExampleLogin>,
) => Promise<ServedLoginApp>;

/**
 * Listens on a free port of 127.0.0.1, gets the login for that origin, and lets `mount` attach the app to the server
 * (`server.on('request', …)`); `mount` may return a closer of its own (Fastify's `app.close`). Closes the server
 * when anything fails.
 *
 * @example
 * ```ts
 * const app = await listenThenMount(loginFor, (server, login) => void server.on('request', createApp(receiver, login)))
 * ```
 */
export async function listenThenMount(
  loginFor: (origin: string) => Promise<ExampleLogin>,
  mount: (server: Server, login: ExampleLogin) => void | (() => Promise<void>) | Promise<void | (() => Promise<void>)>,
): Promise<ServedLoginApp> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const closeServer = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const closeApp = await mount(server, await loginFor(origin));
    return {
      origin,
      close: async () => {
        await closeApp?.();
        if (server.listening) await closeServer();
      },
    };
  } catch (error) {
    await closeServer();
    throw error;
  }
}
