import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import {
  adapterOptionsSpec,
  createAdapter,
  nodeHeaders,
  validateAdapterArguments,
  type AdapterMap,
} from '@kyb-webhooks/core/adapter';
import { nodeBodySource, writeNodeResponse } from '@kyb-webhooks/node';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Options of {@link kybWebhooks}.
 *
 * @example
 * ```ts
 * app.all('/webhooks/kyb', kybWebhooks(receiver, { onResult: (result) => metrics.increment(`kyb.${result.status}`) }))
 * ```
 */
export interface KybExpressOptions {
  /** Called with the result of every delivery, e.g. for metrics. Errors it throws are ignored. */
  onResult?: ((result: ReceiveResult, request: Request) => unknown) | undefined;
}

const SPEC = adapterOptionsSpec({
  owner: 'kybWebhooks (@kyb-webhooks/express)',
  example: 'kybWebhooks(receiver, { onResult: (result) => metrics.increment(result.status) })',
});

// Express adds nothing to what a webhook needs from Node's request and response: the raw body is express.raw()'s
// Buffer when it ran first, else the unread stream (or a parser's leftovers: body_already_parsed).
const EXPRESS_MAP: AdapterMap<Request, Response, void> = {
  method: (req) => req.method,
  headers: nodeHeaders,
  body: (req) => nodeBodySource(req, req.body),
  respond: writeNodeResponse,
};

/**
 * An Express handler that verifies, dedupes and dispatches KYB webhook deliveries through `receiver`.
 * It reads the raw body itself, so mount it before `express.json()` or on a path the JSON parser skips;
 * `express.raw({ type: 'application/json' })` in front of it is fine too.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { kybWebhooks } from '@kyb-webhooks/express'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 *
 * const app = express()
 * app.all('/webhooks/kyb', kybWebhooks(receiver)) // all methods: a GET gets 405 with Allow: POST
 * app.use(express.json()) // the rest of the app
 * ```
 */
export function kybWebhooks(receiver: Receiver, options: KybExpressOptions = {}): RequestHandler {
  validateAdapterArguments(receiver, options, SPEC);
  const deliver = createAdapter(receiver, options, EXPRESS_MAP);
  return (req, res, next) => {
    deliver(req, res).catch(next);
  };
}
