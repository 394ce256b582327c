import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import {
  adapterOptionsSpec,
  createAdapter,
  nodeHeaders,
  optionRules,
  validateAdapterArguments,
  validateOptions,
  type AdapterMap,
  type OptionsSpec,
} from '@kyb-webhooks/core/adapter';
import type {
  FastifyError,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteShorthandOptionsWithHandler,
} from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/**
 * Options of {@link kybWebhooksRoute} (and of the plugin, which passes them on).
 *
 * @example
 * ```ts
 * kybWebhooksRoute(receiver, { onResult: (result) => metrics.increment(`kyb.${result.code ?? 'ok'}`) })
 * ```
 */
export interface KybFastifyRouteOptions {
  /** Called with the result of every delivery, e.g. for metrics. Errors it throws are ignored. */
  onResult?: ((result: ReceiveResult, request: FastifyRequest) => unknown) | undefined;
}

/**
 * Options of the {@link kybWebhooks} plugin.
 *
 * @example
 * ```ts
 * await app.register(kybWebhooks, { receiver, path: '/hooks/kyb', onResult: (result) => log(result.status) })
 * ```
 */
export interface KybFastifyOptions extends KybFastifyRouteOptions {
  /** The receiver that verifies, dedupes and dispatches deliveries. */
  receiver: Receiver;
  /** Where the webhook route listens. Default `'/webhooks/kyb'`. */
  path?: string;
}

const ROUTE_SPEC: OptionsSpec = adapterOptionsSpec({
  owner: 'kybWebhooksRoute (@kyb-webhooks/fastify)',
  example: 'kybWebhooksRoute(receiver, { onResult: (result) => metrics.increment(result.status) })',
});
const PLUGIN_SPEC: OptionsSpec = adapterOptionsSpec({
  owner: 'kybWebhooks (@kyb-webhooks/fastify)',
  example: "app.register(kybWebhooks, { receiver: createReceiver({ ... }), path: '/webhooks/kyb' })",
  options: {
    receiver: optionRules.required(
      optionRules.receiver(),
      'pass the receiver that createReceiver({ secrets, attestation }) returns.',
    ),
    path: optionRules.urlPath(),
    // Register options that Fastify itself reads; they are not the plugin's business.
    logLevel: optionRules.internal(),
    logSerializers: optionRules.internal(),
  },
  aliases: { route: 'path', url: 'path', prefix: 'path' },
});

const FASTIFY_MAP: AdapterMap<FastifyRequest, FastifyReply, FastifyReply> = {
  method: (request) => request.method,
  headers: (request) => nodeHeaders(request.raw),
  body: (request) => {
    // The route's parsers hand over a Buffer. No body at all (GET, or POST without one) reaches us as undefined:
    // that is zero bytes, not a parsed body.
    const { body } = request;
    if (body === undefined) return { kind: 'bytes', bytes: EMPTY };
    return body instanceof Uint8Array ? { kind: 'bytes', bytes: body } : { kind: 'parsed' };
  },
  respond: (reply, { status, headers, body }) => reply.code(status).headers(headers).send(body),
};

// Fastify refused the body for its size itself, without reading the rest: the core drains it before the 413.
const FASTIFY_TOO_LARGE_MAP: AdapterMap<FastifyRequest, FastifyReply, FastifyReply> = {
  ...FASTIFY_MAP,
  body: (request) => ({
    kind: 'refused-too-large',
    stream: request.raw,
    maxBytes: request.routeOptions.bodyLimit ?? 0,
    declaredLength: request.raw.headers['content-length'],
  }),
};

const EMPTY = new Uint8Array(0);

/**
 * Route options (handler, error handler, body limit) for a webhook route you declare yourself. The route must
 * see the raw body as a Buffer: declare it in a context whose content-type parsers use `parseAs: 'buffer'`, or use
 * the {@link kybWebhooks} plugin, which does that for you. A body another parser already turned into an object is
 * answered with 500 `body_already_parsed`. The route's `bodyLimit` is the receiver's `maxBodyBytes`.
 *
 * @example
 * ```ts
 * app.register(async (raw) => {
 *   raw.removeAllContentTypeParsers()
 *   raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
 *   raw.post('/webhooks/kyb', kybWebhooksRoute(receiver))
 * })
 * ```
 */
export function kybWebhooksRoute(
  receiver: Receiver,
  options: KybFastifyRouteOptions = {},
): RouteShorthandOptionsWithHandler {
  validateAdapterArguments(receiver, options, ROUTE_SPEC);
  const deliver = createAdapter(receiver, options, FASTIFY_MAP);
  const deliverTooLarge = createAdapter(receiver, options, FASTIFY_TOO_LARGE_MAP);
  return {
    bodyLimit: receiver.maxBodyBytes,
    // Fastify refuses an oversized body itself (while reading, or at once from Content-Length); answer it like
    // every other rejection, and leave any other error to the app's own error handler.
    async errorHandler(error: FastifyError, request, reply) {
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      return deliverTooLarge(request, reply);
    },
    handler: deliver,
  };
}

const plugin: FastifyPluginAsync<KybFastifyOptions> = async (fastify, pluginOptions) => {
  // At register time, before any route exists: a mistake fails `register`/`ready` instead of the first delivery.
  validateOptions(pluginOptions, PLUGIN_SPEC);
  // Only the route's own options go on: Fastify's register options (logLevel, …) are not the route's.
  const { receiver, path = '/webhooks/kyb', onResult } = pluginOptions;
  const options: KybFastifyRouteOptions = onResult ? { onResult } : {};
  // fastify-plugin lifts this plugin out of encapsulation (for its name and version check), so the raw-body
  // parsers live one level down: the rest of the app keeps parsing JSON as usual.
  await fastify.register(async (webhook) => {
    webhook.removeAllContentTypeParsers();
    // Every content type is read as bytes, so a wrong one reaches the receiver and gets its 415.
    webhook.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const route = kybWebhooksRoute(receiver, options);
    const bodyLimit = Math.min(fastify.initialConfig.bodyLimit ?? Number.POSITIVE_INFINITY, receiver.maxBodyBytes);
    // Every method is routed so the receiver answers 405 with Allow: POST instead of a bare 404.
    webhook.all(path, { ...route, bodyLimit });
  });
};

/**
 * A Fastify plugin that adds the KYB webhook route. Inside its own encapsulated context it reads every body as
 * raw bytes (the signature covers the exact bytes), so the rest of your app still parses JSON normally. The
 * route's body limit is the smaller of Fastify's `bodyLimit` and the receiver's `maxBodyBytes`; an oversized body
 * gets the receiver's 413 `body_too_large` JSON answer. Every method is routed, so a GET gets 405. A `prefix`
 * passed to its `register` is refused (`config_invalid`, "did you mean `path`?"), since a fastify-plugin plugin
 * would ignore it: set `path`, or register it inside a prefixed plugin of yours.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { createReceiver } from '@kyb-webhooks/core'
 * import { kybWebhooks } from '@kyb-webhooks/fastify'
 *
 * const receiver = createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3! }, attestation })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => { … })
 *
 * const app = Fastify()
 * await app.register(kybWebhooks, { receiver, path: '/webhooks/kyb' })
 * ```
 */
export const kybWebhooks = fastifyPlugin(plugin, { name: '@kyb-webhooks/fastify', fastify: '5.x' });
