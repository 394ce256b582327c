import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { runAdapterConformance, type AdapterApp } from '@kyb-webhooks/testing/adapter-suite';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kybWebhooks, kybWebhooksRoute } from './index.js';

async function listen(app: FastifyInstance): Promise<AdapterApp> {
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${origin}/webhooks/kyb`, close: () => app.close() };
}

runAdapterConformance(
  'fastify',
  async (receiver, options) => {
    const app = Fastify();
    await app.register(kybWebhooks, { ...options, receiver, path: '/webhooks/kyb' });
    return listen(app);
  },
  {
    // The route form declared in the app's own context, where Fastify's default JSON parser runs first.
    startAppWithBodyParser: async (receiver) => {
      const app = Fastify();
      app.all('/webhooks/kyb', kybWebhooksRoute(receiver));
      return listen(app);
    },
  },
);

describe('fastify specifics', () => {
  let receiver: Receiver;
  let signer: Awaited<ReturnType<typeof createTestSigner>>;
  let app: FastifyInstance;
  beforeAll(async () => {
    signer = await createTestSigner();
    receiver = createReceiver({ secrets: { ...signer.secrets }, maxBodyBytes: 64 * 1024 });
    app = Fastify({ bodyLimit: 4096 });
    await app.register(kybWebhooks, { receiver });
    app.post('/echo', async (request) => ({ parsed: request.body }));
    app.post('/text', async (request) => ({ type: typeof request.body }));
    await app.ready();
  });
  afterAll(() => app.close());

  it('leaves the rest of the app parsing JSON (and text) with its own parsers', async () => {
    const echo = await app.inject({ method: 'POST', url: '/echo', payload: { hello: 'world' } });
    expect(echo.json()).toEqual({ parsed: { hello: 'world' } });
    const text = await app.inject({
      method: 'POST',
      url: '/text',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(text.json()).toEqual({ type: 'string' });
  });

  it("uses Fastify's bodyLimit when it is smaller than maxBodyBytes, answering with the receiver's JSON 413", async () => {
    const fits = await signer.sign(testEvents.dataRequestRefused());
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/webhooks/kyb',
          headers: fits.headers,
          payload: Buffer.from(fits.body),
        })
      ).statusCode,
    ).toBe(200);
    const oversized = await signer.sign(testEvents.dataRequestRefused({ data: { note: 'x'.repeat(5000) } }));
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/kyb',
      headers: oversized.headers,
      payload: Buffer.from(oversized.body),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: { code: 'body_too_large' } });
  });

  it('declares its name and Fastify version through fastify-plugin', () => {
    const meta = (kybWebhooks as unknown as Record<symbol, { name: string; fastify: string }>)[
      Symbol.for('plugin-meta')
    ];
    expect(meta).toMatchObject({ name: '@kyb-webhooks/fastify', fastify: '5.x' });
  });
});
