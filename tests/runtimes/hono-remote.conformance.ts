/**
 * The Hono adapter's conformance cases against the Hono app served by another runtime (Bun.serve, Deno.serve,
 * workerd): the cases run here in vitest on Node and send real HTTP to that runtime, which builds the receivers and
 * reports their handler calls through the test kit's control API. Started by scripts/runtimes/hono-remote.mjs, which
 * serves packages/hono/src/hono.runtime.ts there and passes its origin in KYB_REMOTE_ORIGIN.
 */
import { connectRemoteAdapterApp, runAdapterConformance } from '@kyb-webhooks/testing/adapter-suite';

const origin = process.env['KYB_REMOTE_ORIGIN'];

runAdapterConformance(
  `hono on ${process.env['KYB_REMOTE_NAME'] ?? 'another runtime'}`,
  connectRemoteAdapterApp(origin ?? 'http://127.0.0.1:9'),
  {
    mountedOn: 'post-only',
    skip: origin
      ? undefined
      : 'KYB_REMOTE_ORIGIN is not set: run node scripts/runtimes/run.mjs, which serves the app on Bun, Deno and workerd',
  },
);
