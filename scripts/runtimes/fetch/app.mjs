// The fetch-handler conformance app that Bun.serve, Deno.serve and workerd serve (scripts/runtimes/hono-remote.mjs):
// createFetchHandler mounted by path as a user would (any method reaches it, so a GET gets the receiver's 405), behind
// the test kit's control API. Runtime-neutral: no node: module.
import { createFetchHandler } from '../../../packages/core/src/index.ts';
import { createRemoteAdapterApp } from '../../../packages/testing/src/adapter-suite/remote.ts';

export const fetchHandler = createRemoteAdapterApp((receiver, path, { bodyParser, onResult }) => {
  const handle = createFetchHandler(receiver, { onResult });
  return async (request) => {
    if (new URL(request.url).pathname !== path) return new Response('not found', { status: 404 });
    // The body-parser variant: a framework that read the JSON first keeps no exact bytes (body_already_parsed).
    if (bodyParser) await request.json();
    return handle(request);
  };
});
