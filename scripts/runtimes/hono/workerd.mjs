// The Hono conformance app as a workerd module worker; scripts/runtimes/hono-remote.mjs gives it a socket.
import { fetchHandler } from '../../../packages/hono/src/hono.runtime.ts';

export default { fetch: (request) => fetchHandler(request) };
