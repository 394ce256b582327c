// The fetch-handler conformance app as a workerd module worker; scripts/runtimes/hono-remote.mjs gives it a socket.
import { fetchHandler } from './app.mjs';

export default { fetch: (request, env, ctx) => fetchHandler(request, env, ctx) };
