/**
 * The core's fetch handler (createFetchHandler) against the app served by another runtime (Bun.serve, Deno.serve,
 * workerd): the cases run here in vitest on Node and send real HTTP to that runtime, which builds the receivers and
 * reports their handler calls through the test kit's control API. Started by scripts/runtimes/hono-remote.mjs, which
 * serves scripts/runtimes/fetch/app.mjs there and passes its origin in KYB_REMOTE_ORIGIN.
 */
import { connectRemoteAdapterApp, runAdapterConformance } from '@kyb-webhooks/testing/adapter-suite';

const origin = process.env['KYB_REMOTE_ORIGIN'];

// Mounted by path for every method, as a fetch-style server routes it: a GET gets the receiver's 405.
runAdapterConformance(`createFetchHandler on ${process.env['KYB_REMOTE_NAME'] ?? 'another runtime'}`, connectRemoteAdapterApp(origin ?? 'http://127.0.0.1:9'), {
  skip: origin ? undefined : 'KYB_REMOTE_ORIGIN is not set: run node scripts/runtimes/run.mjs, which serves the app on Bun, Deno and workerd',
});
