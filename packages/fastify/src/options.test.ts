import { createReceiver, KybWebhookError } from '@kyb-webhooks/core';
import Fastify from 'fastify';
import { runAdapterOptionCases } from '@kyb-webhooks/testing/adapter-suite';
import { describe, expect, it } from 'vitest';
import { kybWebhooks, kybWebhooksRoute } from './index.js';

const receiver = createReceiver({ secrets: { '3': 'whsec_test' } });

const PLUGIN = 'kybWebhooks (@kyb-webhooks/fastify)';

describe('fastify kybWebhooks plugin refuses a bad configuration at register time', () => {
  it.each<[string, unknown, string[]]>([
    ['no receiver', { path: '/webhooks/kyb' }, ['`receiver` is missing', 'createReceiver(']],
    [
      'receiver options instead of a receiver',
      { receiver: { secrets: { '3': 'x' } } },
      ['`receiver` looks like receiver options'],
    ],
    ['a misspelt path', { receiver, pth: '/webhooks/kyb' }, ['`pth` is not an option: did you mean `path`?']],
    [
      'prefix, which fastify-plugin plugins ignore',
      { receiver, prefix: '/api' },
      ['`prefix` is not an option: did you mean `path`?'],
    ],
    ['a path without a leading slash', { receiver, path: 'webhooks/kyb' }, ["`path` must start with '/'"]],
    ['onResult that is not a function', { receiver, onResult: 'log' }, ['`onResult` must be a function']],
    ['a misspelt onResult', { receiver, onresults: () => {} }, ['did you mean `onResult`?']],
  ])('%s', async (_name, options, words) => {
    const app = Fastify();
    let error: unknown;
    try {
      await app.register(kybWebhooks, options as never);
      await app.ready();
    } catch (caught) {
      error = caught;
    } finally {
      await app.close().catch(() => {});
    }
    expect(error).toBeInstanceOf(KybWebhookError);
    expect((error as KybWebhookError).code).toBe('config_invalid');
    expect((error as KybWebhookError).message).toContain(PLUGIN);
    for (const word of words) expect((error as KybWebhookError).message).toContain(word);
  });

  it('fails before any route is added', async () => {
    const app = Fastify();
    await expect(app.register(kybWebhooks, { receiver, pth: '/x' } as never)).rejects.toThrow(/did you mean `path`/);
    await app.close().catch(() => {});
    const fresh = Fastify();
    await fresh.register(kybWebhooks, { receiver, path: '/hooks/kyb', onResult: () => {} });
    await fresh.ready();
    expect(fresh.hasRoute({ method: 'POST', url: '/hooks/kyb' })).toBe(true);
    expect((await fresh.inject({ method: 'GET', url: '/hooks/kyb' })).statusCode).toBe(405);
    await fresh.close();
  });

  it('accepts the register options Fastify itself reads', async () => {
    const app = Fastify();
    await app.register(kybWebhooks, { receiver, logLevel: 'warn' } as never);
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/webhooks/kyb' })).statusCode).toBe(405);
    await app.close();
  });
});

runAdapterOptionCases(
  'kybWebhooksRoute (@kyb-webhooks/fastify)',
  (receiver, options) => kybWebhooksRoute(receiver, options),
  {
    invalid: [
      [
        'path, which belongs to the plugin',
        { path: '/webhooks/kyb' },
        ['`path` is not an option; the options are onResult.'],
      ],
    ],
  },
);

it('kybWebhooksRoute limits the route body to the receiver', () => {
  expect(kybWebhooksRoute(receiver).bodyLimit).toBe(receiver.maxBodyBytes);
});
