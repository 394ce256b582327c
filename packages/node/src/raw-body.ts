import type { IncomingMessage } from 'node:http';
import { readHeader, type BodySource } from '@kyb-webhooks/core/adapter';

/**
 * Where the raw body of a Node request is, for every Node entry point (the plain `(req, res)` handler, Express, Koa):
 *
 * - `alreadyRead` holds the exact bytes: a Buffer (`express.raw()`, or `req.body = await buffer(req)` with `micro`),
 *   or text a body parser kept that provably re-encodes to the signed bytes (Koa's `ctx.request.rawBody`, see
 *   below) → those bytes;
 * - nothing has read the request stream yet → the stream, read by the core within `maxBodyBytes`;
 * - otherwise a parser consumed the stream and kept only what it made of it (`express.json()`, Next.js's default
 *   `bodyParser`, `@koa/bodyparser` on a body that is not provably byte-exact) → 500 `body_already_parsed`, whose
 *   message says to mount the webhook before the parser (in Next.js pages routes:
 *   `export const config = { api: { bodyParser: false } }`).
 *
 * @example
 * ```ts
 * import { receiveDelivery } from '@kyb-webhooks/core/adapter'
 * import { nodeBodySource } from '@kyb-webhooks/node'
 *
 * const result = await receiveDelivery(receiver, { method: req.method, headers: req.headers, body: nodeBodySource(req, req.body) })
 * ```
 */
export function nodeBodySource(req: IncomingMessage, alreadyRead?: unknown): BodySource {
  if (alreadyRead instanceof Uint8Array) return { kind: 'bytes', bytes: alreadyRead };
  if (typeof alreadyRead === 'string' && isByteExact(alreadyRead, req)) return { kind: 'bytes', bytes: alreadyRead };
  // body-parser (Express) marks what it read with `_body`; Node itself knows whether anything was read or ended.
  if (!req.readableEnded && !req.readableDidRead && !(req as { _body?: boolean })._body) {
    return { kind: 'stream', stream: req, declaredLength: req.headers['content-length'] };
  }
  return { kind: 'parsed' };
}

/**
 * Body parsers that keep the raw body as text (Koa's `rawBody`) decode it as UTF-8: invalid bytes become U+FFFD, a
 * BOM is dropped, gzip is inflated. Encoding it back gives the signed bytes only when the body was declared UTF-8 and
 * none of that happened: the byte count matches Content-Length and no replacement character is present. In doubt, no.
 */
function isByteExact(text: string, req: IncomingMessage): boolean {
  const declaredLength = readHeader(req.headers, 'content-length') ?? '';
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i
    .exec(readHeader(req.headers, 'content-type') ?? '')?.[1]
    ?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return false;
  if (!['', 'identity'].includes((readHeader(req.headers, 'content-encoding') ?? '').toLowerCase())) return false;
  if (!/^\d+$/.test(declaredLength) || text.includes('\uFFFD')) return false;
  return textEncoder.encode(text).byteLength === Number(declaredLength);
}

const textEncoder = new TextEncoder();
