import { createServer } from 'node:http';
import { createReceiver, KybWebhookError } from '@kyb-webhooks/core';
import { serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

const receiver = createReceiver({ secrets: { '3': 'whsec_test' } });

function configError(run: () => unknown): KybWebhookError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KybWebhookError);
    return error as KybWebhookError;
  }
  throw new Error('expected config_invalid, nothing was thrown');
}

describe('koa kybWebhooks refuses a bad configuration at creation', () => {
  it.each<[string, unknown, unknown, string[]]>([
    // Before: the typo was ignored, `path` stayed undefined and the middleware answered every route of the app.
    ['a typo in path (pth)', receiver, { pth: '/webhooks/kyb' }, ['`pth` is not an option: did you mean `path`?']],
    ['route instead of path', receiver, { route: '/webhooks/kyb' }, ['`route` is not an option: did you mean `path`?']],
    ['a path without a leading slash', receiver, { path: 'webhooks/kyb' }, ["`path` must start with '/'", "'/webhooks/kyb'"]],
    ['a path with a query string', receiver, { path: '/webhooks/kyb?v=1' }, ["`path` must not contain '?'"]],
    ['an empty path', receiver, { path: '' }, ["`path` must start with '/'"]],
    ['a path that is not a string', receiver, { path: /webhooks/ }, ["`path` must be a path starting with '/'", 'got an instance of RegExp']],
    ['onResult that is not a function', receiver, { onResult: true }, ['`onResult` must be a function', 'got a boolean']],
    ['no receiver', undefined, { path: '/webhooks/kyb' }, ['`receiver` is missing']],
    ['receiver options instead of a receiver', { attestation: {} }, undefined, ['`receiver` looks like receiver options']],
    ['null options', receiver, null, ['needs an options object', 'got null']],
  ])('%s', (_name, candidate, options, words) => {
    const error = configError(() => kybWebhooks(candidate as never, options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('kybWebhooks (@kyb-webhooks/koa)');
    for (const word of words) expect(error.message).toContain(word);
  });

  it('with a valid path, answers that path and passes every other route on', async () => {
    const app = new Koa();
    app.use(kybWebhooks(receiver, { path: '/webhooks/kyb', onResult: () => {} }));
    app.use((ctx) => {
      ctx.body = 'app route';
    });
    const server = await serveOnLoopback(createServer(app.callback()));
    try {
      const other = await fetch(new URL('/other', server.url));
      expect(await other.text()).toBe('app route');
      const webhook = await fetch(new URL('/webhooks/kyb', server.url));
      expect(webhook.status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['empty options', {}],
    ['a path with a parameter-like segment', { path: '/hooks/kyb-v2' }],
  ])('accepts %s', (_name, options) => {
    expect(typeof kybWebhooks(receiver, options as never)).toBe('function');
  });
});
