import { optionRules, readBodyStream, validateArgument, validateOptions, type Receiver, type ReceiveResult } from '@kyb-webhooks/core';
import type { Request, RequestHandler, Response } from 'express';

/** Options of {@link kybWebhooks}. */
export interface KybExpressOptions {
  /** Called with the result of every delivery, e.g. for metrics. Errors it throws are ignored. */
  onResult?: (result: ReceiveResult, request: Request) => void;
}

const OWNER = 'kybWebhooks (@kyb-webhooks/express)';
const OPTIONS_SPEC = {
  owner: OWNER,
  example: 'kybWebhooks(receiver, { onResult: (result) => metrics.increment(result.status) })',
  options: { onResult: optionRules.func('called with the result of every delivery') },
  aliases: { onResponse: 'onResult', onDelivery: 'onResult' },
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
 * app.post('/webhooks/kyb', kybWebhooks(receiver))
 * app.use(express.json()) // the rest of the app
 * ```
 */
export function kybWebhooks(receiver: Receiver, options: KybExpressOptions = {}): RequestHandler {
  validateArgument(OWNER, 'receiver', receiver, optionRules.receiver());
  validateOptions(options, OPTIONS_SPEC);
  return (req, res, next) => {
    handle(receiver, req, res, options).catch(next);
  };
}

async function handle(receiver: Receiver, req: Request, res: Response, options: KybExpressOptions): Promise<void> {
  const body: unknown = req.body;
  let result: ReceiveResult;
  if (body instanceof Uint8Array) {
    // express.raw() ran first: its Buffer holds the exact bytes (it enforces its own limit, the core ours).
    result = await receiver.receive({ method: req.method, headers: req.headers, body });
  } else if (!req.readableEnded && !(req as { _body?: boolean })._body) {
    const read = await readBodyStream(req, { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] });
    result = read.ok ? await receiver.receive({ method: req.method, headers: req.headers, body: read.body }) : receiver.reject(read.code);
  } else {
    // Another parser consumed the stream: its object or string is not the bytes that were signed.
    result = receiver.reject('body_already_parsed');
  }
  if (options.onResult) {
    try {
      options.onResult(result, req);
    } catch {
      // metrics hooks never change the answer
    }
  }
  writeResult(res, result);
}

/**
 * Writes the answer with Node's own response methods. Express's `res.json()` would add what a webhook answer never
 * needs, at a cost measured on every delivery: an ETag (a SHA-1 of the body), freshness checks and charset
 * negotiation. Headers that earlier middleware set (CORS, security headers) are kept; Node adds Content-Length.
 */
function writeResult(res: Response, result: ReceiveResult): void {
  res.statusCode = result.status;
  for (const name in result.headers) res.setHeader(name, result.headers[name]!);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(result.body));
}
