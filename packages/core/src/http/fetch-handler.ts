/**
 * The Web-standard entry point: `(request: Request) => Promise<Response>`, for every server that speaks fetch
 * (Next.js route handlers, Bun.serve, Deno.serve, Cloudflare Workers, Hono, …). Web APIs only.
 */
import {
  createAdapter,
  adapterOptionsSpec,
  validateAdapterArguments,
  type AdapterMap,
  type AdapterOptions,
} from './adapter-core.js';
import type { BodySource } from './body-source.js';
import { optionRules } from '../option-rules.js';
import type { Receiver, ReceiveResult } from '../receiver.js';

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
  /**
   * For platforms that stop a request's work once it is answered and offer a global `waitUntil` (Vercel:
   * `import { waitUntil } from '@vercel/functions'`); see `ReceiveInput.waitUntil`. On Cloudflare Workers nothing is
   * needed: the handler uses the `ctx.waitUntil` the Worker's `fetch(request, env, ctx)` passes it.
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/**
 * The third argument of a Cloudflare Worker's `fetch(request, env, ctx)`: only its `waitUntil` is used.
 *
 * @example
 * ```ts
 * export default { fetch: (request: Request, env: unknown, ctx: WaitUntilContext) => handle(request, env, ctx) }
 * ```
 */
export interface WaitUntilContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A fetch-style handler: the `(request: Request) => Promise<Response>` shape that Next.js route handlers, Bun.serve,
 * Deno.serve and Cloudflare Workers call. A Worker's third argument (`ctx`) is used for its `waitUntil`; every other
 * extra argument (Next.js's route context, Bun's server, Deno's connection info, a Worker's `env`) is ignored.
 *
 * @example
 * ```ts
 * const handler: FetchHandler = createFetchHandler(receiver)
 * const response = await handler(new Request(url, { method: 'POST', headers, body }))
 * ```
 */
export type FetchHandler = (request: Request, env?: unknown, ctx?: unknown) => Promise<Response>;

const SPEC = adapterOptionsSpec({
  owner: 'createFetchHandler (@kyb-webhooks/core)',
  example: 'createFetchHandler(receiver, { onResult: (result) => metrics.increment(result.status) })',
  options: {
    waitUntil: optionRules.func("the platform's waitUntil, e.g. import { waitUntil } from '@vercel/functions'"),
  },
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

/** The `waitUntil` of a Worker's `ctx`, bound to it; undefined for anything else in that place. */
function waitUntilOf(ctx: unknown): ((promise: Promise<unknown>) => void) | undefined {
  const waitUntil = (ctx as Partial<WaitUntilContext> | null | undefined)?.waitUntil;
  return typeof waitUntil === 'function' ? (promise) => waitUntil.call(ctx, promise) : undefined;
}

function fetchMap(waitUntil: FetchHandlerOptions['waitUntil']): AdapterMap<Request, unknown, Response> {
  return {
    method: (request) => request.method,
    headers: (request) => request.headers,
    body: requestBodySource,
    respond: (_ctx, { status, headers, body }) => new Response(body, { status, headers }),
    waitUntil: (_request, ctx) => waitUntilOf(ctx) ?? waitUntil,
  };
}

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
  const deliver = createAdapter(receiver, options, fetchMap(options.waitUntil));
  // The second argument is never ours (Next.js's route context, Bun's server, Deno's info, a Worker's env); the third
  // is a Worker's ctx, whose waitUntil keeps a timed-out handler's late outcome alive.
  return (request, _env, ctx) => deliver(request, ctx);
}
