import type { ServerResponse } from 'node:http';
import type { AdapterResponse } from '@kyb-webhooks/core/adapter';

/**
 * Writes an answer with Node's own response methods, keeping headers that earlier middleware set (CORS, security
 * headers); Node adds Content-Length. Shared by the plain Node handler and the Express adapter: Express's `res.json()`
 * would add what a webhook answer never needs, at a cost measured on every delivery (an ETag, a SHA-1 of the body,
 * freshness checks and charset negotiation).
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
  res.end(response.body);
}
