/** The demo for Hono on Node (`npm run demo -- hono`): the example app, the shared scenario and its table. */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { listening, runDemo } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

await runDemo('Hono', (receiver) => listening(serve({ fetch: createApp(receiver).fetch, port: 0, hostname: '127.0.0.1' }) as Server));
