// The fetch-handler conformance app that Bun.serve, Deno.serve and workerd serve (scripts/runtimes/hono-remote.mjs):
// createFetchHandler mounted by path as a user would (any method reaches it, so a GET gets the receiver's 405), behind
// the test kit's control API. Runtime-neutral: no node: module.
import { createFetchHandler, createReceiver } from '../../../packages/core/src/index.ts';
import { createRemoteAdapterApp } from '../../../packages/testing/src/adapter-suite/remote.ts';

/** The secret of the module-scope receiver below; tests/runtimes/fetch-remote.conformance.ts signs with it. */
export const MODULE_SCOPE_SECRET = 'whsec_module_scope_receiver';
// Created when the module loads, as a Worker written `export default { fetch: handle }` creates it: workerd forbids
// random values in global scope, so creating a receiver (and its default memory store) must make none.
const moduleScoped = createFetchHandler(createReceiver({ secrets: { 1: MODULE_SCOPE_SECRET }, logger: false }));

const remoteApp = createRemoteAdapterApp((receiver, path, { bodyParser, onResult }) => {
  const handle = createFetchHandler(receiver, { onResult });
  return async (request) => {
    if (new URL(request.url).pathname !== path) return new Response('not found', { status: 404 });
    // The body-parser variant: a framework that read the JSON first keeps no exact bytes (body_already_parsed).
    if (bodyParser) await request.json();
    return handle(request);
  };
});

/** The control API's app, plus `/module-scope` served by the receiver made at module scope. */
export const fetchHandler = (request, env, ctx) =>
  new URL(request.url).pathname === '/module-scope' ? moduleScoped(request, env, ctx) : remoteApp(request);
