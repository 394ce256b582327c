// Serves the fetch-handler conformance app with Bun.serve on 127.0.0.1 (a free port) and prints {"port":…} on stdout.
/* global Bun */
import { fetchHandler } from './app.mjs';

const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: fetchHandler });
console.log(JSON.stringify({ port: server.port }));
