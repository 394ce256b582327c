// Serves the fetch-handler conformance app with Deno.serve on 127.0.0.1 (a free port) and prints {"port":…} on stdout.
/* global Deno */
import { fetchHandler } from './app.mjs';

Deno.serve(
  { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(JSON.stringify({ port })) },
  fetchHandler,
);
