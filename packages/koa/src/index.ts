import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import {
  adapterOptionsSpec,
  createAdapter,
  nodeHeaders,
  optionRules,
  validateAdapterArguments,
  type AdapterMap,
} from '@kyb-webhooks/core/adapter';
import { closeIfBodyUnread, nodeBodySource } from '@kyb-webhooks/node';
import type { Context, Middleware } from 'koa';

/**
 * Options of {@link kybWebhooks}.
 *
 * @example
 * ```ts
 * app.use(kybWebhooks(receiver, { path: '/webhooks/kyb', onResult: (result) => metrics.increment(`kyb.${result.status}`) }))
 * ```
 */
export interface KybKoaOptions {
  /**
   * Handle only requests to this path (any method, so a GET gets 405) and pass the rest on. Leave it out when a
   * router mounts the middleware, e.g. `router.post('/webhooks/kyb', kybWebhooks(receiver))`.
   */
  path?: string;
  /** Called with the result of every delivery, e.g. for metrics. Errors it throws are ignored. */
  onResult?: ((result: ReceiveResult, ctx: Context) => unknown) | undefined;
}

const SPEC = adapterOptionsSpec({
  owner: 'kybWebhooks (@kyb-webhooks/koa)',
  example: "kybWebhooks(receiver, { path: '/webhooks/kyb' })",
  options: { path: optionRules.urlPath() },
  aliases: { route: 'path', url: 'path', prefix: 'path', mountPath: 'path' },
});

const KOA_MAP: AdapterMap<Context, Context, void> = {
  method: (ctx) => ctx.method,
  headers: (ctx) => nodeHeaders(ctx.req),
  // Both Koa body parsers keep the text they decoded in ctx.request.rawBody; the shared reader uses it only when it
  // provably re-encodes to the signed bytes.
  body: (ctx) => nodeBodySource(ctx.req, (ctx.request as { rawBody?: unknown }).rawBody),
  respond: (ctx, { status, headers, body }) => {
    ctx.status = status;
    ctx.set(headers);
    // Answered before the whole body arrived (a drain bound): close, or Node reads the rest without limit.
    closeIfBodyUnread(ctx.res, ctx.req);
    // A string body with Content-Type already set: Koa sends it as it is (and adds Content-Length).
    ctx.body = body;
  },
};

/**
 * Koa middleware (Koa 2 and 3) that verifies, dedupes and dispatches KYB webhook deliveries through `receiver`.
 * It reads the raw body from `ctx.req` itself. When `@koa/bodyparser` or `koa-bodyparser` ran first, their
 * `ctx.request.rawBody` is used only when it provably holds the exact bytes that were signed; otherwise the
 * delivery gets 500 `body_already_parsed`, whose message says to mount the webhook before the body parser.
 *
 * @example
 * ```ts
 * import Koa from 'koa'
 * import { bodyParser } from '@koa/bodyparser'
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { kybWebhooks } from '@kyb-webhooks/koa'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 *
 * const app = new Koa()
 * app.use(kybWebhooks(receiver, { path: '/webhooks/kyb' })) // before the body parser
 * app.use(bodyParser())
 * ```
 */
export function kybWebhooks(receiver: Receiver, options: KybKoaOptions = {}): Middleware {
  // A typo here must not go unnoticed: without a valid `path` the middleware would answer every route of the app.
  validateAdapterArguments(receiver, options, SPEC);
  const deliver = createAdapter(receiver, options, KOA_MAP);
  const { path } = options;
  return (ctx, next) => (path !== undefined && ctx.path !== path ? next() : deliver(ctx, ctx));
}
