import { startKybService } from '@kyb-webhooks/testing';
import { describe, expect, it } from 'vitest';
import { bundleForWebRuntime } from '../../../scripts/web-bundle.js';

// Bundles the client as a Worker/Deno/Bun bundler would (no "node" condition) and runs the bundle against the local
// service: it must hold no node: import and no Buffer, and still pull and verify a release with Web Crypto.
describe('client on a Web-standard runtime', () => {
  it('bundles without node: or Buffer and verifies a pulled release', async () => {
    const bundle = await bundleForWebRuntime<typeof import('./index.js')>(new URL('./index.ts', import.meta.url));
    const code = bundle.code;
    expect(code).not.toMatch(/["']node:/);
    expect(code).not.toMatch(/\bBuffer\b/);

    const { createKybClient } = await bundle.load();
    const service = await startKybService();
    try {
      const id = await service.createDataRequest();
      await service.release(id);
      const client = createKybClient({
        baseUrl: service.baseUrl,
        apiKey: service.apiKey,
        attestation: { issuer: service.issuer, audience: service.audience },
      });
      const released = await client.release(id);
      expect(released.status).toBe('released');
      expect(released.status === 'released' ? released.answers.size : 0).toBeGreaterThan(0);
    } finally {
      await service.stop();
    }
  });
});
