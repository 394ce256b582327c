import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { startKybService } from '@kyb-webhooks/testing';
import { describe, expect, it } from 'vitest';

// Bundles the client as a Worker/Deno/Bun bundler would (no "node" condition) and runs the bundle against the local
// service: it must hold no node: import and no Buffer, and still pull and verify a release with Web Crypto.
describe('client on a Web-standard runtime', () => {
  it('bundles without node: or Buffer and verifies a pulled release', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('./index.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      conditions: ['worker', 'browser', '@kyb-webhooks/source'],
      mainFields: ['module', 'main'],
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/["']node:/);
    expect(code).not.toMatch(/\bBuffer\b/);

    const { createKybClient } = await import(`data:text/javascript;base64,${btoa(unescape(encodeURIComponent(code)))}`);
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
      expect(released.answers.size).toBeGreaterThan(0);
    } finally {
      await service.stop();
    }
  });
});
