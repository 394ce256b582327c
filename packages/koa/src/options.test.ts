import { createServer } from 'node:http';
import { createReceiver } from '@kyb-webhooks/core';
import { runAdapterOptionCases, serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

const receiver = createReceiver({ secrets: { '3': 'whsec_test' } });

runAdapterOptionCases('kybWebhooks (@kyb-webhooks/koa)', (receiver, options) => kybWebhooks(receiver, options), {
  optionNames: 'path',
  invalid: [
    // Before: the typo was ignored, `path` stayed undefined and the middleware answered every route of the app.
    ['a typo in path (pth)', { pth: '/webhooks/kyb' }, ['`pth` is not an option: did you mean `path`?']],
    ['route instead of path', { route: '/webhooks/kyb' }, ['`route` is not an option: did you mean `path`?']],
    ['a path without a leading slash', { path: 'webhooks/kyb' }, ["`path` must start with '/'", "'/webhooks/kyb'"]],
    ['a path with a query string', { path: '/webhooks/kyb?v=1' }, ["`path` must not contain '?'"]],
    ['an empty path', { path: '' }, ["`path` must start with '/'"]],
    [
      'a path that is not a string',
      { path: /webhooks/ },
      ["`path` must be a path starting with '/'", 'got an instance of RegExp'],
    ],
  ],
  valid: [['a path with a parameter-like segment', { path: '/hooks/kyb-v2' }]],
});

describe('koa kybWebhooks with a valid path', () => {
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
});
