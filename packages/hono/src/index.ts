import { optionRules, readWebBodyStream, validateArgument, validateOptions, type Receiver, type ReceiveResult } from '@kyb-webhooks/core';
import type { Context, Handler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * Options of {@link kybWebhooks}.
 *
 * @example
 * ```ts
 * app.post('/webhooks/kyb', kybWebhooks(receiver, { onResult: (result, c) => console.log(c.req.path, result.status) }))
 * ```
 */
export interface KybHonoOptions {
  /** Called with the result of every delivery, e.g. for metrics. Errors it throws are ignored. */
  onResult?: (result: ReceiveResult, c: Context) => void;
}

const OWNER = 'kybWebhooks (@kyb-webhooks/hono)';
const OPTIONS_SPEC = {
  owner: OWNER,
  example: 'kybWebhooks(receiver, { onResult: (result, c) => console.log(c.req.path, result.status) })',
  options: { onResult: optionRules.func('called with the result of every delivery') },
  aliases: { onResponse: 'onResult', onDelivery: 'onResult' },
};

/**
 * A Hono handler that verifies, dedupes and dispatches KYB webhook deliveries through `receiver`. It reads the
 * body as raw bytes (`c.req.arrayBuffer()`), refuses an oversized one from its Content-Length without keeping it,
 * and uses only Web-standard APIs, so it runs on Node (`@hono/node-server`), Bun, Deno and Workers. A body that a
 * middleware already read as JSON or text gets 500 `body_already_parsed`.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { kybWebhooks } from '@kyb-webhooks/hono'
 *
 * const receiver = createReceiver({ secrets: { '3': env.KYB_SECRET_V3 }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 *
 * const app = new Hono()
 * app.post('/webhooks/kyb', kybWebhooks(receiver))
 * ```
 */
export function kybWebhooks(receiver: Receiver, options: KybHonoOptions = {}): Handler {
  validateArgument(OWNER, 'receiver', receiver, optionRules.receiver());
  validateOptions(options, OPTIONS_SPEC);
  return async (c) => {
    const result = await receive(receiver, c);
    if (options.onResult) {
      try {
        options.onResult(result, c);
      } catch {
        // metrics hooks never change the answer
      }
    }
    return c.json(result.body, result.status as ContentfulStatusCode, result.headers);
  };
}

async function receive(receiver: Receiver, c: Context): Promise<ReceiveResult> {
  const { req } = c;
  const declaredLength = Number(req.header('content-length'));
  if (declaredLength > receiver.maxBodyBytes) {
    // Read (and drop) the rest before answering: closing over unread bytes resets the connection, which can destroy
    // the 413 before the sender reads it. The core bounds how much and how long.
    if (req.raw.body && !req.raw.bodyUsed) {
      await readWebBodyStream(req.raw.body, { maxBytes: receiver.maxBodyBytes, declaredLength }).catch(() => undefined);
    }
    return receiver.reject('body_too_large');
  }
  // Hono caches what a middleware read; only cached raw bytes are the signed ones. Bytes rebuilt from cached
  // text or JSON (what arrayBuffer() would hand us then) are a re-encoding at best, a re-serialization at worst.
  const cached = Object.keys(req.bodyCache);
  if (cached.some((key) => key !== 'arrayBuffer') || (cached.length === 0 && req.raw.bodyUsed)) {
    return receiver.reject('body_already_parsed');
  }
  if (Number.isNaN(declaredLength) && cached.length === 0 && req.raw.body) {
    // No Content-Length (chunked): read the stream with the limit, never buffering more than maxBodyBytes + 1 chunk.
    const read = await readWebBodyStream(req.raw.body, { maxBytes: receiver.maxBodyBytes });
    return read.ok ? receiver.receive({ method: req.method, headers: req.raw.headers, body: read.body }) : receiver.reject(read.code);
  }
  return receiver.receive({ method: req.method, headers: req.raw.headers, body: await req.arrayBuffer() });
}
