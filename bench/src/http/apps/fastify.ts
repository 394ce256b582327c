import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { header, OK_BODY, UNAUTHORIZED_BODY, type StartApp } from './types.js';

export const start: StartApp = async ({ variant, path, checkHmac, receiver }) => {
  const app = Fastify({ logger: false });
  if (variant === 'adapter' || variant === 'adapter-attested') {
    const { kybWebhooks } = await import('@kyb-webhooks/fastify');
    await app.register(kybWebhooks, { receiver: receiver(), path });
  } else {
    // The idiomatic raw body in Fastify, scoped like the plugin does it: a buffer parser in its own context.
    await app.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      raw.post(path, async (request, reply) => {
        const body = request.body as Buffer;
        if (variant === 'hmac' && !checkHmac(header(request.headers['service-kyb-signature']), body)) {
          return reply.code(401).send(UNAUTHORIZED_BODY);
        }
        return reply.code(200).send(OK_BODY);
      });
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
};
