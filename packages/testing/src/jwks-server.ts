import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Jwks } from './keys.js';

/**
 * The path the service publishes its attestation keys at (spec 4.2).
 *
 * @example
 * ```ts
 * const jwksUrl = `${service.baseUrl}${KYB_JWKS_PATH}`
 * ```
 */
export const KYB_JWKS_PATH = '/.well-known/kyb-jwks.json';

/**
 * A running JWKS server. `requests` counts fetches of the JWKS path, so tests can assert that a receiver caches
 * keys and rate-limits refetches on an unknown kid.
 *
 * @example
 * ```ts
 * const server = await startJwksServer(signer.jwks)
 * expect(server.requests).toBe(1)
 * await server.close()
 * ```
 */
export interface JwksServer {
  /** Full URL of the JWKS document, e.g. `http://127.0.0.1:53211/.well-known/kyb-jwks.json`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, for building other URLs (a 404 path, say). */
  readonly origin: string;
  /** GET requests to the JWKS path so far, including failed ones. */
  readonly requests: number;
  /** Serve another key set from now on: key rotation. */
  setJwks(jwks: Jwks | (() => Jwks)): void;
  /** Answer the JWKS path with this status (and an empty JSON error) instead of the keys: an outage. 200 restores it. */
  setStatus(status: number): void;
  close(): Promise<void>;
}

/**
 * Serves a JWKS on 127.0.0.1 at a free port, at GET /.well-known/kyb-jwks.json. Pass a function to compute the
 * set on every request.
 *
 * @example
 * ```ts
 * const jwksServer = await startJwksServer(signer.jwks)
 * const receiver = createReceiver({ secrets, attestation: { issuer, audience, jwksUrl: jwksServer.url } })
 * jwksServer.setJwks({ keys: [...signer.jwks.keys, ...rotated.jwks.keys] })
 * ```
 */
export async function startJwksServer(jwks: Jwks | (() => Jwks)): Promise<JwksServer> {
  let source = jwks;
  let status = 200;
  let requests = 0;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path !== KYB_JWKS_PATH) return reply(response, 404, { error: 'not_found' });
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return reply(response, 405, { error: 'method_not_allowed' });
    requests += 1;
    if (status !== 200) return reply(response, status, { error: 'unavailable' });
    return reply(response, 200, typeof source === 'function' ? source() : source);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}${KYB_JWKS_PATH}`,
    origin,
    get requests() {
      return requests;
    },
    setJwks(next) {
      source = next;
    },
    setStatus(next) {
      status = next;
    },
    close() {
      // Keep-alive sockets from the receiver's fetch would otherwise hold close() open.
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function reply(response: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, {
    // No cache headers: how long keys are cached is the receiver's decision, and what the tests measure.
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
