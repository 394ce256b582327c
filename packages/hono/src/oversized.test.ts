import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import { Hono } from 'hono';
// Until the lead exports it from the adapter suite's index (then: from '@kyb-webhooks/testing/adapter-suite').
import { runOversizedBodyCases } from '../../testing/src/adapter-suite/oversized.js';
import { kybWebhooks } from './index.js';

runOversizedBodyCases('hono on @hono/node-server', (receiver) =>
  serveOnLoopback(createAdaptorServer({ fetch: new Hono().post('/webhooks/kyb', kybWebhooks(receiver)).fetch }) as Server),
);
