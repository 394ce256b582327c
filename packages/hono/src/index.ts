import { adapterOptionsSpec, createAdapter, requestBodySource, validateAdapterArguments, type AdapterMap, type BodySource, type Receiver, type ReceiveResult } from '@kyb-webhooks/core';
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
  onResult?: ((result: ReceiveResult, c: Context) => unknown) | undefined;
}

const SPEC = adapterOptionsSpec({
  owner: 'kybWebhooks (@kyb-webhooks/hono)',
  example: 'kybWebhooks(receiver, { onResult: (result, c) => console.log(c.req.path, result.status) })',
});

const HONO_MAP: AdapterMap<Context, Context, Response> = {
  method: (c) => c.req.method,
  headers: (c) => c.req.raw.headers,
  body: honoBodySource,
  // c.body keeps the headers earlier middleware set with c.header().
  respond: (c, { status, headers, body }) => c.body(body, status as ContentfulStatusCode, headers),
};

/**
 * A Hono handler that verifies, dedupes and dispatches KYB webhook deliveries through `receiver`: the core's
 * fetch-style entry point (`createFetchHandler`) mapped onto Hono's context. It reads the raw bytes from the request
 * stream within `maxBodyBytes` (or takes the ones a middleware cached with `c.req.arrayBuffer()`), refuses an
 * oversized body without keeping it, and uses only Web-standard APIs, so it runs on Node (`@hono/node-server`), Bun,
 * Deno and Workers. A body that a middleware already read as JSON or text gets 500 `body_already_parsed`.
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
  validateAdapterArguments(receiver, options, SPEC);
  const deliver = createAdapter(receiver, options, HONO_MAP);
  return (c) => deliver(c, c);
}

/**
 * Hono caches what a middleware read; only cached raw bytes are the signed ones. Bytes rebuilt from cached text or
 * JSON (what arrayBuffer() would hand us then) are a re-encoding at best, a re-serialization at worst. With nothing
 * cached, the request's own stream is read like any fetch-style request's.
 */
function honoBodySource(c: Context): BodySource | Promise<BodySource> {
  const { req } = c;
  let cached = false;
  for (const key in req.bodyCache) {
    if (key !== 'arrayBuffer') return { kind: 'parsed' };
    cached = true;
  }
  if (cached) return req.arrayBuffer().then((bytes): BodySource => ({ kind: 'bytes', bytes }));
  return requestBodySource(req.raw);
}
