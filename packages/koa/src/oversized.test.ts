import { createServer } from 'node:http';
import { serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite';
import Koa from 'koa';
// Until the lead exports it from the adapter suite's index (then: from '@kyb-webhooks/testing/adapter-suite').
import { runOversizedBodyCases } from '../../testing/src/adapter-suite/oversized.js';
import { kybWebhooks } from './index.js';

runOversizedBodyCases('koa', (receiver) => serveOnLoopback(createServer(new Koa().use(kybWebhooks(receiver, { path: '/webhooks/kyb' })).callback())));
