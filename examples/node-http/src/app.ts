import { createServer, type Server } from 'node:http';
import type { Receiver } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/node';

/**
 * The example app: a plain `http.createServer` with no framework. The webhook handler reads the raw body from the
 * request stream itself, so nothing may read the body before it; every other route is the app's own.
 */
export function createApp(receiver: Receiver): Server {
  const webhooks = kybWebhooks(receiver);
  return createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (pathname === '/webhooks/kyb') return void webhooks(req, res);
    if (pathname === '/health')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
}
