// Serves the Hono conformance app with Deno.serve on 127.0.0.1 (a free port) and prints {"port":…} on stdout.
/* global Deno */
import { fetchHandler } from '../../../packages/hono/src/hono.runtime.ts';

Deno.serve(
  { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(JSON.stringify({ port })) },
  fetchHandler,
);
