import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import {
  adapterOptionsSpec,
  createAdapter,
  nodeHeaders,
  validateAdapterArguments,
  type AdapterMap,
} from '@kyb-webhooks/core/adapter';
import { nodeBodySource } from './raw-body.js';
import { writeNodeResponse } from './write-response.js';

/**
 * Options of {@link kybWebhooks}.
 *
 * @example
 * ```ts
 * kybWebhooks(receiver, { onResult: (result, req) => metrics.increment(`kyb.${result.status}`) })
 * ```
 */
export interface KybNodeOptions {
  /** Called once per delivery with its result and the request, e.g. for metrics. What it throws is ignored. */
  onResult?: ((result: ReceiveResult, req: IncomingMessage) => unknown) | undefined;
}

/**
 * A plain Node request handler, as `http.createServer` and Next.js pages routes call it.
 *
 * @example
 * ```ts
 * const handler: KybNodeHandler = kybWebhooks(receiver)
 * createServer((req, res) => void handler(req, res))
 * ```
 */
export type KybNodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const SPEC = adapterOptionsSpec({
  owner: 'kybWebhooks (@kyb-webhooks/node)',
  example: 'kybWebhooks(receiver, { onResult: (result) => metrics.increment(result.status) })',
});

const NODE_MAP: AdapterMap<IncomingMessage, ServerResponse, void> = {
  method: (req) => req.method,
  headers: nodeHeaders,
  // Next.js pages routes (and micro-style servers) leave what their parser made of the body in `req.body`.
  body: (req) => nodeBodySource(req, (req as { body?: unknown }).body),
  respond: writeNodeResponse,
};

/**
 * A `(req, res)` handler for `http.createServer`, Next.js pages routes and any server that hands out Node's
 * `IncomingMessage` and `ServerResponse`: it verifies, dedupes and dispatches KYB webhook deliveries through
 * `receiver`, reading the raw bytes from the request stream within `maxBodyBytes`, and answers with the receiver's
 * JSON. Any method reaches it: a GET gets 405 with `Allow: POST`. A body a parser already turned into an object gets
 * 500 `body_already_parsed`; in a Next.js pages route, turn Next's parser off for the route:
 * `export const config = { api: { bodyParser: false } }`. The returned promise never rejects: when the sender goes
 * away mid-body, the connection is closed.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { kybWebhooks } from '@kyb-webhooks/node'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 *
 * const webhooks = kybWebhooks(receiver)
 * createServer((req, res) => {
 *   if (req.url === '/webhooks/kyb') return void webhooks(req, res)
 *   res.writeHead(404).end()
 * }).listen(3000, '127.0.0.1')
 *
 * // Next.js pages router: pages/api/webhooks/kyb.ts
 * export const config = { api: { bodyParser: false } }
 * export default kybWebhooks(receiver)
 * ```
 */
export function kybWebhooks(receiver: Receiver, options: KybNodeOptions = {}): KybNodeHandler {
  validateAdapterArguments(receiver, options, SPEC);
  const deliver = createAdapter(receiver, options, NODE_MAP);
  return (req, res) =>
    deliver(req, res).catch(() => {
      // Reading the body failed: the sender went away, so nobody is left to answer. A rejection here would be an
      // unhandled one in a plain http.createServer callback.
      res.destroy();
    });
}
