import { optionRules, readBodyStream, validateArgument, validateOptions, type OptionsSpec, type Receiver, type ReceiveResult } from '@kyb-webhooks/core';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteShorthandOptionsWithHandler } from 'fastify';
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
  onResult?: (result: ReceiveResult, request: FastifyRequest) => void;
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

const ON_RESULT = optionRules.func('called with the result of every delivery');
const ROUTE_OWNER = 'kybWebhooksRoute (@kyb-webhooks/fastify)';
const ROUTE_SPEC: OptionsSpec = {
  owner: ROUTE_OWNER,
  example: 'kybWebhooksRoute(receiver, { onResult: (result) => metrics.increment(result.status) })',
  options: { onResult: ON_RESULT },
  aliases: { onResponse: 'onResult', onDelivery: 'onResult' },
};
const PLUGIN_SPEC: OptionsSpec = {
  owner: 'kybWebhooks (@kyb-webhooks/fastify)',
  example: "app.register(kybWebhooks, { receiver: createReceiver({ ... }), path: '/webhooks/kyb' })",
  options: {
    receiver: optionRules.required(optionRules.receiver(), 'pass the receiver that createReceiver({ secrets, attestation }) returns.'),
    path: optionRules.urlPath(),
    onResult: ON_RESULT,
    // Register options that Fastify itself reads; they are not the plugin's business.
    logLevel: optionRules.internal(),
    logSerializers: optionRules.internal(),
  },
  aliases: { route: 'path', url: 'path', prefix: 'path', onResponse: 'onResult', onDelivery: 'onResult' },
};

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
export function kybWebhooksRoute(receiver: Receiver, options: KybFastifyRouteOptions = {}): RouteShorthandOptionsWithHandler {
  validateArgument(ROUTE_OWNER, 'receiver', receiver, optionRules.receiver());
  validateOptions(options, ROUTE_SPEC);
  const send = (request: FastifyRequest, reply: FastifyReply, result: ReceiveResult) => {
    if (options.onResult) {
      try {
        options.onResult(result, request);
      } catch {
        // metrics hooks never change the answer
      }
    }
    return reply.code(result.status).headers(result.headers).send(result.body);
  };
  return {
    bodyLimit: receiver.maxBodyBytes,
    // Fastify refuses an oversized body itself (while reading, or at once from Content-Length); answer it like
    // every other rejection, and leave any other error to the app's own error handler.
    async errorHandler(error: FastifyError, request, reply) {
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      // Fastify answers without reading the rest, and closing over unread bytes resets the connection, which can
      // destroy the 413 before the sender reads it. The core's reader drains the rest first, within the core's
      // bounds (OVERSIZED_BODY_DRAIN), keeping none of it: either the declared length broke the limit (nothing was
      // read), or what Fastify read did (then the limit left is 0).
      const { raw } = request;
      if (!raw.readableEnded) {
        const drain = raw.readableDidRead ? { maxBytes: 0 } : { maxBytes: request.routeOptions.bodyLimit ?? 0, declaredLength: raw.headers['content-length'] };
        await readBodyStream(raw, drain).catch(() => undefined);
      }
      return send(request, reply, receiver.reject('body_too_large'));
    },
    async handler(request, reply) {
      // No body at all (GET, or POST without one) reaches us as undefined: that is zero bytes, not a parsed body.
      const body = request.body === undefined ? new Uint8Array(0) : request.body;
      const result =
        body instanceof Uint8Array
          ? await receiver.receive({ method: request.method, headers: request.headers, body })
          : receiver.reject('body_already_parsed');
      return send(request, reply, result);
    },
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
 * gets the receiver's 413 `body_too_large` JSON answer. Every method is routed, so a GET gets 405. Like every
 * fastify-plugin plugin it ignores a `prefix` passed to its own `register`: set `path`, or register it inside a
 * prefixed plugin of yours.
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
