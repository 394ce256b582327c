/**
 * The Hono app the adapter conformance suite drives on Bun, Deno and workerd (scripts/runtimes/hono-remote.mjs):
 * mounted exactly as hono.test.ts mounts it on Node, behind the test kit's control API, so the suite running in
 * vitest on Node can ask this runtime for receivers and read their handler calls. Runtime-neutral: no node: module.
 */
import { createRemoteAdapterApp } from '../../testing/src/adapter-suite/remote.js';
import { Hono } from 'hono';
import { kybWebhooks } from './index.js';

/** The control API plus the mounted apps, as a Web-standard fetch handler. */
export const fetchHandler = createRemoteAdapterApp((receiver, path, { bodyParser, onResult }) => {
  const app = new Hono();
  // The body-parser variant: a middleware that parses JSON first and keeps no exact bytes (body_already_parsed).
  if (bodyParser) {
    app.use(path, async (c, next) => {
      await c.req.json();
      await next();
    });
  }
  // Mounted the documented way, for POST only: a GET gets Hono's own 404 (the suite's 'post-only' mode).
  return app.post(path, kybWebhooks(receiver, { onResult })).fetch;
});
