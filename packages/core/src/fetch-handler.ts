/**
 * The Web-standard entry point: `(request: Request) => Promise<Response>`, for every server that speaks fetch
 * (Next.js route handlers, Bun.serve, Deno.serve, Cloudflare Workers, Hono, …). Web APIs only.
 */
import { createAdapter, adapterOptionsSpec, validateAdapterArguments, type AdapterMap, type AdapterOptions } from './adapter.js';
import type { BodySource } from './body-source.js';
import type { Receiver, ReceiveResult } from './receiver.js';

/**
 * Options of {@link createFetchHandler}.
 *
 * @example
 * ```ts
 * const options: FetchHandlerOptions = { onResult: (result, request) => console.log(new URL(request.url).pathname, result.status) }
 * ```
 */
export interface FetchHandlerOptions extends AdapterOptions<Request> {
  /** Called once per delivery with its result and the request, e.g. for metrics. What it throws is ignored. */
  onResult?: ((result: ReceiveResult, request: Request) => unknown) | undefined;
}

/**
 * A fetch-style handler: the `(request: Request) => Promise<Response>` shape that Next.js route handlers, Bun.serve,
 * Deno.serve and Cloudflare Workers call.
 *
 * @example
 * ```ts
 * const handler: FetchHandler = createFetchHandler(receiver)
 * const response = await handler(new Request(url, { method: 'POST', headers, body }))
 * ```
 */
export type FetchHandler = (request: Request) => Promise<Response>;

const SPEC = adapterOptionsSpec({
  owner: 'createFetchHandler (@kyb-webhooks/core)',
  example: 'createFetchHandler(receiver, { onResult: (result) => metrics.increment(result.status) })',
});

/**
 * Where a Web `Request`'s raw body is: its unread stream, read within `maxBodyBytes` (an oversized one is drained,
 * bounded, before the 413), or nothing to verify when something already read it (500 `body_already_parsed`).
 * For adapters built on `Request` (Hono uses it when no middleware cached the body).
 *
 * @example
 * ```ts
 * const result = await receiveDelivery(receiver, { method: request.method, headers: request.headers, body: requestBodySource(request) })
 * ```
 */
export function requestBodySource(request: Request): BodySource {
  if (request.bodyUsed) return { kind: 'parsed' };
  return { kind: 'web-stream', stream: request.body, declaredLength: request.headers.get('content-length') };
}

const FETCH_MAP: AdapterMap<Request, undefined, Response> = {
  method: (request) => request.method,
  headers: (request) => request.headers,
  body: requestBodySource,
  respond: (_res, { status, headers, body }) => new Response(body, { status, headers }),
};

/**
 * A Web-standard handler, `(request: Request) => Promise<Response>`, that verifies, dedupes and dispatches KYB
 * webhook deliveries through `receiver`. It reads the raw bytes from `request.body` with the receiver's
 * `maxBodyBytes` (an oversized body is refused without being kept), and answers every delivery with the receiver's
 * JSON. Any method reaches it: a GET is answered 405 with `Allow: POST`. Uses Web APIs only, so it runs on Node 20+,
 * Bun, Deno, Cloudflare Workers and in Next.js route handlers. A request whose body something already read gets
 * 500 `body_already_parsed`. The promise rejects only when the body stream fails while it is read (the sender went
 * away): nobody is left to answer, and the server handles it as any failed handler.
 *
 * @example
 * ```ts
 * // Next.js app router: app/webhooks/kyb/route.ts
 * import { createFetchHandler, createReceiver } from '@kyb-webhooks/core'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 * export const POST = createFetchHandler(receiver)
 *
 * // Bun.serve / Deno.serve / a Worker
 * const handle = createFetchHandler(receiver)
 * Bun.serve({ port: 3000, fetch: (request) => new URL(request.url).pathname === '/webhooks/kyb' ? handle(request) : new Response('Not found', { status: 404 }) })
 * Deno.serve({ port: 3000 }, handle)
 * export default { fetch: handle }
 * ```
 */
export function createFetchHandler(receiver: Receiver, options: FetchHandlerOptions = {}): FetchHandler {
  validateAdapterArguments(receiver, options, SPEC);
  const deliver = createAdapter(receiver, options, FETCH_MAP);
  // One parameter only: Next.js passes a route context second, which is not ours.
  return (request) => deliver(request, undefined);
}
