/**
 * The core's fetch handler (createFetchHandler) against the app served by another runtime (Bun.serve, Deno.serve,
 * workerd): the cases run here in vitest on Node and send real HTTP to that runtime, which builds the receivers and
 * reports their handler calls through the test kit's control API. Started by scripts/runtimes/hono-remote.mjs, which
 * serves scripts/runtimes/fetch/app.mjs there and passes its origin in KYB_REMOTE_ORIGIN.
 */
import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { connectRemoteAdapterApp, runAdapterConformance } from '@kyb-webhooks/testing/adapter-suite';
import { describe, expect, it } from 'vitest';

const origin = process.env['KYB_REMOTE_ORIGIN'];
/** The secret scripts/runtimes/fetch/app.mjs gives its module-scope receiver (MODULE_SCOPE_SECRET there). */
const MODULE_SCOPE_SECRET = 'whsec_module_scope_receiver';

// Mounted by path for every method, as a fetch-style server routes it: a GET gets the receiver's 405.
runAdapterConformance(
  `createFetchHandler on ${process.env['KYB_REMOTE_NAME'] ?? 'another runtime'}`,
  connectRemoteAdapterApp(origin ?? 'http://127.0.0.1:9'),
  {
    skip: origin
      ? undefined
      : 'KYB_REMOTE_ORIGIN is not set: run node scripts/runtimes/run.mjs, which serves the app on Bun, Deno and workerd',
  },
);

// Workers forbid random values in global scope, where `export default { fetch: handle }` apps create their receiver.
describe(`a receiver created at module scope on ${process.env['KYB_REMOTE_NAME'] ?? 'another runtime'}`, () => {
  it.skipIf(!origin)('loads, and processes a signed delivery once (the second is a duplicate)', async () => {
    const signer = await createTestSigner({ secrets: { '1': MODULE_SCOPE_SECRET } });
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const answers = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${origin}/module-scope`, { method: 'POST', headers, body });
      answers.push([response.status, await response.json()]);
    }
    expect(answers).toEqual([
      [200, { received: true }],
      [200, { received: true, code: 'duplicate' }],
    ]);
  });
});
