import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import {
  adapterOptionsSpec,
  createAdapter,
  nodeHeaders,
  requestBodySource,
  validateAdapterArguments,
  type AdapterMap,
  type BodySource,
  type ByteStream,
} from '@kyb-webhooks/core/adapter';
import type { Context, Handler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * Options of {@link kybWebhooks}.
 *
 * @example
 * ```ts
 * app.all('/webhooks/kyb', kybWebhooks(receiver, { onResult: (result, c) => console.log(c.req.path, result.status) }))
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
  // On Node, the headers Node already parsed (see nodeIncoming; nodeHeaders keeps a repeated Content-Type as the
  // Web path does): c.req.raw.headers would build a Headers object.
  headers: (c) => {
    const incoming = nodeIncoming(c);
    return incoming ? nodeHeaders(incoming) : c.req.raw.headers;
  },
  body: honoBodySource,
  // c.body keeps the headers earlier middleware set with c.header().
  respond: (c, { status, headers, body }) => {
    if (leavesBodyUnread(c)) headers.connection = 'close'; // a fresh object per answer (toAdapterResponse)
    return c.body(body, status as ContentfulStatusCode, headers);
  },
  waitUntil: workerWaitUntil,
};

/**
 * On Workers, the execution context's waitUntil, so a handler past handlerTimeoutMs still settles its claim after
 * the answer (the runtime would otherwise cancel it). Read only when there is work to hand over: Hono's
 * `c.executionCtx` throws where there is none (Bun, Deno), and building that Error on every delivery cost about 3 µs.
 * On Node (`@hono/node-server`, which passes `c.env.incoming`) nothing is handed over: the process keeps running.
 */
function workerWaitUntil(c: Context): ((promise: Promise<unknown>) => void) | undefined {
  if ((c.env as { incoming?: unknown } | undefined)?.incoming !== undefined) return undefined;
  return (promise) => {
    try {
      c.executionCtx.waitUntil(promise);
    } catch {
      // no execution context (Bun, Deno): the work goes on without one
    }
  };
}

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
 * app.all('/webhooks/kyb', kybWebhooks(receiver)) // all methods: a GET gets 405, not Hono's 404
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
  const incoming = nodeIncoming(c);
  if (incoming && isUntouched(incoming, req.raw)) {
    return { kind: 'stream', stream: incoming, declaredLength: incoming.headers['content-length'] };
  }
  return requestBodySource(req.raw);
}

/** What this adapter reads of Node's IncomingMessage; typed here so the package imports nothing from Node. */
interface NodeIncoming extends ByteStream {
  readonly headers: { readonly [name: string]: string | string[] | undefined; readonly 'content-length'?: string };
  readonly rawHeaders: readonly string[];
  readonly readableFlowing: boolean | null;
  /** True once the whole request, body included, has arrived (whether or not anyone read it). */
  readonly complete?: boolean;
  readonly httpVersionMajor?: number;
}

/**
 * On Node over HTTP/1 (`@hono/node-server`): whether the answer goes out before the whole body arrived, because the
 * body drain stopped at its bound (4 MiB past the limit, 5 s) or a body declared past it was not read. The answer
 * then carries `Connection: close`, so Node closes the socket once it is written instead of reading the rest (the
 * server's own drain after the answer reads up to 64 MiB more). Not on HTTP/2, which has no Connection header.
 */
function leavesBodyUnread(c: Context): boolean {
  const incoming = (c.env as { incoming?: Partial<NodeIncoming> } | undefined)?.incoming;
  return typeof incoming === 'object' && incoming?.complete === false && incoming.httpVersionMajor === 1;
}

/**
 * On Node, @hono/node-server passes the IncomingMessage as `c.env.incoming`, and `c.req.raw` is its lightweight
 * request over it, which builds a full undici Request, an AbortController and a Web stream over the Node stream the
 * first time anything reads `body` (about 110 of the 150 µs of server CPU a webhook request cost there, measured in
 * the bench). The body is read from the Node stream instead, and the headers Node already parsed are used, but only for the
 * request @hono/node-server made for it: an own property of `c.req.raw` holds exactly this IncomingMessage. A request
 * a middleware put in its place (Hono's bodyLimit does, for a body without Content-Length), and Bun, Deno and
 * Workers, keep the Web path. `rawBody` (Google Cloud Functions) means the stream was read before Hono saw it.
 */
function nodeIncoming(c: Context): NodeIncoming | undefined {
  const incoming = (c.env as { incoming?: Partial<NodeIncoming> & { rawBody?: unknown } } | undefined)?.incoming;
  if (typeof incoming !== 'object' || incoming === null || 'rawBody' in incoming) return undefined;
  if (typeof incoming.on !== 'function' || !Array.isArray(incoming.rawHeaders) || typeof incoming.headers !== 'object')
    return undefined;
  const request = c.req.raw as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(request))
    if (request[key] === incoming) return incoming as NodeIncoming;
  return undefined;
}

/**
 * Nobody else reads the body: the lightweight request has not built its Request (which would own a Web stream over
 * the Node stream, read now or on its first pull), and the Node stream itself is not flowing, read or ended.
 */
function isUntouched(incoming: NodeIncoming, request: Request): boolean {
  if (incoming.readableFlowing !== null || incoming.readableDidRead || incoming.readableEnded) return false;
  const own = request as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(own)) {
    const value = own[key];
    if (value instanceof Request || value instanceof AbortController) return false;
  }
  return true;
}
