import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterResponse } from '@kyb-webhooks/core/adapter';

/**
 * Writes an answer with Node's own response methods, keeping headers that earlier middleware set (CORS, security
 * headers); Node adds Content-Length. Shared by the plain Node handler and the Express adapter: Express's `res.json()`
 * would add what a webhook answer never needs, at a cost measured on every delivery (an ETag, a SHA-1 of the body,
 * freshness checks and charset negotiation). An answer given before the whole body arrived closes the connection
 * (see {@link closeIfBodyUnread}).
 *
 * @example
 * ```ts
 * import { toAdapterResponse } from '@kyb-webhooks/core/adapter'
 * import { writeNodeResponse } from '@kyb-webhooks/node'
 *
 * writeNodeResponse(res, toAdapterResponse(receiver.reject('body_too_large')))
 * ```
 */
export function writeNodeResponse(res: ServerResponse, response: AdapterResponse): void {
  res.statusCode = response.status;
  for (const name in response.headers) res.setHeader(name, response.headers[name]!);
  closeIfBodyUnread(res);
  res.end(response.body);
}

/**
 * Makes an answer close the connection (`Connection: close`) when the request's body has not all arrived: the core
 * stopped draining it at a bound (`OVERSIZED_BODY_DRAIN`: 4 MiB past the limit, 5 s) or did not read a body declared
 * past that. Why: after the answer Node itself reads and drops whatever is left of an unfinished body, with no bound
 * at all (gigabytes in seconds from an endless sender). With `Connection: close`, Node closes the socket once the
 * answer is written, so the bound the docs promise holds; a sender still uploading then may see a reset instead of
 * the answer, which is the documented price past the bound. A body that arrived whole keeps the connection alive.
 * Call it before the answer is written, for adapters that do not write through {@link writeNodeResponse}.
 *
 * @example
 * ```ts
 * // Koa: set with the answer's headers, before Koa writes it
 * ctx.status = 413
 * closeIfBodyUnread(ctx.res, ctx.req)
 * ```
 */
export function closeIfBodyUnread(res: ServerResponse, req: IncomingMessage | undefined = res.req): void {
  // HTTP/2 has no Connection header (Node's compatibility layer throws on it), and its streams end on their own. A
  // response without its request (a stand-in built by hand) has no body to leave unread.
  if (!req || req.complete || req.httpVersionMajor !== 1 || res.headersSent) return;
  res.setHeader('connection', 'close');
}
