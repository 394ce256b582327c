/**
 * A receiver inside a Fastify app, driven in process by `app.inject()` (light-my-request): the HTTP section's app
 * (`../http/apps/fastify.ts`) without a socket, so callgrind counts a framework's request handling with ours or the
 * hand-written receiver in it. Both subjects pay the same Fastify and inject costs; the difference is the receiver's.
 */
import type { Endpoint } from '../http/apps/types.js';
import { buildFastifyApp } from '../http/apps/fastify.js';
import type { Answer } from './protocol.js';

const PATH = '/webhooks/kyb';

export async function injectAnswer(endpoint: Endpoint): Promise<Answer> {
  const app = await buildFastifyApp({ path: PATH, endpoint });
  await app.ready();
  return async (delivery) =>
    (await app.inject({ method: 'POST', url: PATH, headers: delivery.headers, payload: delivery.body })).statusCode;
}
