import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { answerBody, BODY_LIMIT_BYTES, header, type AppContext, type StartApp } from './types.js';

/**
 * The Fastify app of one endpoint, not listening: the HTTP section starts it on a port, the instruction-count section
 * drives it in process with `app.inject()`.
 */
export async function buildFastifyApp({ path, endpoint }: AppContext): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  if (endpoint.kind === 'adapter') {
    const { kybWebhooks } = await import('@kyb-webhooks/fastify');
    await app.register(kybWebhooks, { receiver: endpoint.receiver, path });
  } else {
    // The idiomatic raw body in Fastify (Stripe's docs too): a buffer parser, scoped to the route's own context.
    await app.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) =>
        done(null, body),
      );
      raw.post(path, async (request, reply) => {
        const status = endpoint.answer(header(request.headers[endpoint.header]), request.body as Buffer);
        return reply.code(status).send(answerBody(status));
      });
    });
  }
  return app;
}

export const start: StartApp = async (context) => {
  const app = await buildFastifyApp(context);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
};
