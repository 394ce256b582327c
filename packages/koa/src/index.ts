import { optionRules, readBodyStream, validateArgument, validateOptions, type Receiver, type ReceiveResult } from '@kyb-webhooks/core';
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
  onResult?: (result: ReceiveResult, ctx: Context) => void;
}

const OWNER = 'kybWebhooks (@kyb-webhooks/koa)';
const OPTIONS_SPEC = {
  owner: OWNER,
  example: "kybWebhooks(receiver, { path: '/webhooks/kyb' })",
  options: { path: optionRules.urlPath(), onResult: optionRules.func('called with the result of every delivery') },
  aliases: { route: 'path', url: 'path', prefix: 'path', mountPath: 'path', onResponse: 'onResult', onDelivery: 'onResult' },
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
  validateArgument(OWNER, 'receiver', receiver, optionRules.receiver());
  validateOptions(options, OPTIONS_SPEC);
  return async (ctx, next) => {
    if (options.path !== undefined && ctx.path !== options.path) return next();
    const { req } = ctx;
    const rawBody: unknown = (ctx.request as { rawBody?: unknown }).rawBody;
    let result: ReceiveResult;
    if (rawBody instanceof Uint8Array || (typeof rawBody === 'string' && isByteExact(rawBody, ctx))) {
      result = await receiver.receive({ method: ctx.method, headers: req.headers, body: rawBody });
    } else if (rawBody === undefined && !req.readableEnded && !req.readableDidRead) {
      const read = await readBodyStream(req, { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] });
      result = read.ok ? await receiver.receive({ method: ctx.method, headers: req.headers, body: read.body }) : receiver.reject(read.code);
    } else {
      // A parser consumed the stream and what it kept is not provably the signed bytes.
      result = receiver.reject('body_already_parsed');
    }
    if (options.onResult) {
      try {
        options.onResult(result, ctx);
      } catch {
        // metrics hooks never change the answer
      }
    }
    ctx.status = result.status;
    ctx.set(result.headers);
    ctx.body = result.body;
  };
}

/**
 * Both Koa body parsers keep `rawBody` as text decoded as UTF-8 (invalid bytes become U+FFFD, a BOM is dropped,
 * gzip is inflated). Encoding it back gives the signed bytes only when the body was declared UTF-8 and nothing of
 * that happened: the byte count matches Content-Length and no replacement character is present. In doubt, no.
 */
function isByteExact(rawBody: string, ctx: Context): boolean {
  const declaredLength = ctx.get('content-length');
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(ctx.get('content-type'))?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return false;
  if (!['', 'identity'].includes(ctx.get('content-encoding').toLowerCase())) return false;
  if (!/^\d+$/.test(declaredLength) || rawBody.includes('\uFFFD')) return false;
  return new TextEncoder().encode(rawBody).byteLength === Number(declaredLength);
}
