// The layer runs wherever the core runs: bundled as a Worker, Deno or Bun bundler would (no "node" condition), it
// holds no node: import and no Buffer, and the bundle still traces a delivery.
import { context } from '@opentelemetry/api';
import { createReceiver } from '@kyb-webhooks/core';
import { createTestSigner, testStream } from '@kyb-webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleForWebRuntime } from '../../../scripts/web-bundle.js';
import { asyncContextManager, sdkRig, shapeOf, spanTrees } from './test-helpers.js';

const rig = sdkRig();
afterAll(async () => {
  await rig.shutdown();
  context.disable();
});

describe('the OpenTelemetry layer on a Web-standard runtime', () => {
  it('bundles without node: or Buffer, and the bundle traces a delivery', async () => {
    const bundle = await bundleForWebRuntime<typeof import('./index.js')>(new URL('./index.ts', import.meta.url));
    expect(bundle.code).not.toMatch(/["']node:/);
    expect(bundle.code).not.toMatch(/\bBuffer\b/);

    context.setGlobalContextManager(asyncContextManager());
    const { openTelemetry } = await bundle.load();
    const signer = await createTestSigner();
    const receiver = createReceiver({
      secrets: { ...signer.secrets },
      logger: false,
      telemetry: openTelemetry({ tracerProvider: rig.tracerProvider, meterProvider: rig.meterProvider }),
    });
    receiver.onAny(async function audit() {});
    const [event] = testStream(['kyb.data_request.refused']);
    const { headers, body } = await signer.sign(event!);
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(spanTrees(rig.spans()).map(shapeOf)).toEqual([
      { 'process kyb.data_request.refused': ['claim', 'handler audit', 'complete'] },
    ]);
  });
});
