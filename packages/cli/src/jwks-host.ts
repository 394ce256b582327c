import { createServer, type Server } from 'node:http';
import { KYB_JWKS_PATH, type Jwks } from '@kyb-webhooks/testing';
import { CliError } from './errors.js';

/**
 * A JWKS served on 127.0.0.1 at a fixed port, so the `KYB_JWKS_URL` a dev server was given keeps working.
 *
 * @example
 * ```ts
 * const host = await serveJwks(signer.jwks, 4479)
 * await host.close()
 * ```
 */
export interface JwksHost {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `jwks` at GET /.well-known/kyb-jwks.json on 127.0.0.1:`port` (the test kit's JWKS server picks a random
 * port, which a dev server's environment cannot follow across restarts). Rejects with the errno code when the port is
 * taken.
 *
 * @example
 * ```ts
 * const host = await serveJwks({ keys: [publicJwk] }, 4479) // http://127.0.0.1:4479/.well-known/kyb-jwks.json
 * ```
 */
export async function serveJwks(jwks: Jwks, port: number): Promise<JwksHost> {
  const text = JSON.stringify(jwks);
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const found = path === KYB_JWKS_PATH && (request.method === 'GET' || request.method === 'HEAD');
    const body = found ? text : JSON.stringify({ error: 'not_found', hint: `the JWKS is at ${KYB_JWKS_PATH}` });
    response.writeHead(found ? 200 : 404, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}${KYB_JWKS_PATH}`,
    close() {
      server.closeAllConnections(); // the receiver's keep-alive socket would hold close() open
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Makes sure the dev server can fetch the dev JWKS while a command runs: serves it on the keys' port, or, when the
 * port is taken, checks that whatever listens there (normally `kyb-webhooks jwks serve`) serves the same key.
 * The returned function stops the server this call started, if any.
 *
 * @example
 * ```ts
 * const release = await ensureJwksServed(signer.jwks, keys.kid, keys.jwksPort)
 * try { await send() } finally { await release() }
 * ```
 */
export async function ensureJwksServed(
  jwks: Jwks,
  kid: string,
  port: number,
): Promise<{ url: string; started: boolean; release: () => Promise<void> }> {
  try {
    const host = await serveJwks(jwks, port);
    return { url: host.url, started: true, release: () => host.close() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
      throw new CliError(
        `Could not serve the development JWKS on 127.0.0.1:${port} (${(error as NodeJS.ErrnoException).code ?? 'error'}); run \`kyb-webhooks jwks serve\` in another terminal.`,
      );
    }
  }
  const url = `http://127.0.0.1:${port}${KYB_JWKS_PATH}`;
  if (await servesKid(url, kid)) return { url, started: false, release: async () => {} };
  throw new CliError(
    `Port ${port} is in use by something that does not serve these development keys (kid ${kid}), so your dev server could not verify attestations. ` +
      `Stop it, or run \`kyb-webhooks jwks serve\` with these keys, or create keys with another port (--jwks-port) and give your dev server the new KYB_JWKS_URL.`,
  );
}

async function servesKid(url: string, kid: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    if (!response.ok) return false;
    const body = (await response.json()) as { keys?: { kid?: unknown }[] };
    return Array.isArray(body.keys) && body.keys.some((key) => key.kid === kid);
  } catch {
    return false;
  }
}
