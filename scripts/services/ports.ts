import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now. Another process could take it before the server binds,
 * so callers retry with a new port when the server fails to bind.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port the OS assigned'));
      });
    });
  });
}
