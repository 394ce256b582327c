import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { signInThroughApp } from './sign-in.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(status: number, location?: string): Promise<string> {
  server = createServer((_req, res) => res.writeHead(status, location ? { location } : {}).end('not a login'));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// A sign-in helper that "succeeded" without the app redirecting to the login server would let tests pass on an app
// whose login routes are not mounted at all.
it.each([
  ['answers a page', 200, undefined],
  ['redirects within the app', 302, '/elsewhere'],
])(
  'signInThroughApp fails when the start route %s instead of redirecting to the login server',
  async (_case, status, location) => {
    const origin = await serve(status, location);
    await expect(signInThroughApp(`${origin}/auth/login`)).rejects.toThrow(
      `the start route answered ${status} instead of a redirect to the login server`,
    );
  },
);
